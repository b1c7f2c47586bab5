// Checks that hold the documentation to the code. Each returns one line per problem, naming
// the document and what is missing or wrong, so a failing test says what to write.
//
// The op tables and the pass table are the rows between HTML comment markers
// (`<!-- ops: model begin -->` ... `<!-- ops: model end -->`), as tests/layering_check.py
// reads the dependency rule of docs/architecture.md: the first column names ops (or passes)
// in backticks, the third names the attributes, in backticks.
#pragma once

#include <string>
#include <vector>

namespace gxc::docs {

// The text of a file of the source tree, by its path relative to the repository root.
std::string readSource(const std::string& relative);

// docs/model-format.md's model op table holds a row for every op a model can use, and
// docs/ir.md's internal op table one for every other op of the registry (ir/op_kinds.h);
// each row names every attribute of its ops' schemas that a model or the IR may set, every
// name in a first column is an op of the right table, and none is listed twice. Attributes
// that only passes set (`shard_of`) must appear in docs/ir.md.
std::vector<std::string> opTableProblems(const std::string& modelFormat, const std::string& ir);

// docs/ir.md's pass table names every registered pass and nothing else, and each pass has its
// lit test, tests/lit/NAME.gxir.
std::vector<std::string> passTableProblems(const std::string& ir);

// Every command of `gxc --help`, and every option that `gxc run|compile|devices --help` and
// `gxc-opt --help` list, appears in docs/cli.md (an option as `--name` in backticks).
std::vector<std::string> cliOptionProblems(const std::string& cli);

// The GXC_* environment variables the sources read (getenv), found by scanning them.
std::vector<std::string> environmentVariablesRead();

// Every link of a markdown file (`[text](target)`, relative to `relativePath`'s folder) and
// every path in backticks that starts with `../` stays inside the repository and exists.
std::vector<std::string> linkProblems(const std::string& relativePath, const std::string& text);

// The ```yaml blocks of a markdown text that are whole models (they start with `gxc: 1`).
std::vector<std::string> completeModelExamples(const std::string& markdown);

}  // namespace gxc::docs
