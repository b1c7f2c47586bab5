#include "docs_check.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "ir/op_kinds.h"
#include "passes/pass_registry.h"
#include "tools/driver/gxc_cli.h"

namespace gxc::docs {
namespace {

namespace fs = std::filesystem;

std::vector<OpKind> allOpKinds() {
  return {
#define GXC_KIND(id, name) OpKind::id,
      GXC_OP_KINDS(GXC_KIND)
#undef GXC_KIND
  };
}

// The names in backticks in `text`: "`add` `sub`" gives add, sub.
std::vector<std::string> backticked(const std::string& text) {
  static const std::regex quoted("`([^`]+)`");
  std::vector<std::string> names;
  for (std::sregex_iterator it(text.begin(), text.end(), quoted), end; it != end; ++it)
    names.push_back((*it)[1]);
  return names;
}

// `markdown` without its fenced code blocks, whose ``` would pair with the backticks of the
// text around them.
std::string withoutCodeBlocks(const std::string& markdown) {
  std::string text, line;
  std::istringstream lines(markdown);
  bool inBlock = false;
  while (std::getline(lines, line)) {
    if (line.starts_with("```")) {
      inBlock = !inBlock;
      continue;
    }
    if (!inBlock) text += line + "\n";
  }
  return text;
}

// Whether `text` names `name` in backticks, alone or with a value: `axis`, `axis = 0`.
bool mentions(const std::string& text, const std::string& name) {
  for (const std::string& quoted : backticked(text))
    if (quoted == name || quoted.starts_with(name + " ") || quoted.starts_with(name + "="))
      return true;
  return false;
}

// The body rows of the table between `<!-- MARKER begin -->` and `<!-- MARKER end -->`, split
// into cells at unescaped `|`; the header and separator rows are left out. Adds a problem and
// returns nothing when the markers are missing.
std::vector<std::vector<std::string>> markedTable(const std::string& text,
                                                  const std::string& document,
                                                  const std::string& marker,
                                                  std::vector<std::string>& problems) {
  std::string begin = "<!-- " + marker + " begin -->", end = "<!-- " + marker + " end -->";
  size_t first = text.find(begin), last = text.find(end);
  if (first == std::string::npos || last == std::string::npos || last < first) {
    problems.push_back(fmt::format("{}: no table between {} and {}", document, begin, end));
    return {};
  }
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text.substr(first + begin.size(), last - first - begin.size()));
  std::string line;
  bool header = true;
  while (std::getline(lines, line)) {
    if (!line.starts_with("|")) continue;
    std::vector<std::string> cells(1);
    for (size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
        cells.back() += '|';
        ++i;
      } else if (line[i] == '|') {
        cells.emplace_back();
      } else {
        cells.back() += line[i];
      }
    }
    bool separator = line.find_first_not_of("|-: ") == std::string::npos;
    if (!header && !separator) rows.push_back(cells);
    header = false;
  }
  return rows;
}

// One op table: the ops whose isModelOp() is `modelOps`, each in one row with its attributes.
void checkOpTable(const std::string& text, const std::string& document, const std::string& marker,
                  bool modelOps, std::vector<std::string>& problems) {
  const char* table = modelOps ? "the table of model ops" : "the table of internal ops";
  size_t problemsBefore = problems.size();
  std::vector<std::vector<std::string>> rows = markedTable(text, document, marker, problems);
  if (problems.size() > problemsBefore) return;  // no table: one problem, not one per op
  std::set<std::string> seen;
  for (const std::vector<std::string>& row : rows) {
    std::string attributes = row.size() > 2 ? row[2] : "";
    for (const std::string& name : backticked(row[0])) {
      std::optional<OpKind> kind = parseOpKind(name);
      if (!kind) {
        problems.push_back(fmt::format(
            "{}: the row of '{}' names no op of the registry (ir/op_kinds.cpp)", document, name));
        continue;
      }
      if (isModelOp(*kind) != modelOps) {
        problems.push_back(fmt::format("{}: '{}' is {} but has a row in {}", document, name,
                                       modelOps ? "an op only the compiler makes" : "a model op",
                                       table));
        continue;
      }
      if (!seen.insert(name).second)
        problems.push_back(fmt::format("{}: op '{}' has two rows in {}", document, name, table));
      for (const AttrSpec& spec : opSchema(*kind).attrs)
        if (!spec.compilerOnly && !mentions(attributes, std::string(spec.name)))
          problems.push_back(fmt::format("{}: op '{}': attribute '{}' is not in its row", document,
                                         name, spec.name));
    }
  }
  for (OpKind kind : allOpKinds())
    if (isModelOp(kind) == modelOps && !seen.count(std::string(opName(kind))))
      problems.push_back(
          fmt::format("{}: op '{}' has no row in {}", document, opName(kind), table));
}

std::string helpOf(bool gxcOpt, std::vector<const char*> argv) {
  std::ostringstream out, err;
  int status = gxcOpt ? gxcOptMain(static_cast<int>(argv.size()), argv.data(), out, err)
                      : gxcMain(static_cast<int>(argv.size()), argv.data(), out, err);
  if (status != 0) return "";
  return out.str();
}

// The options a CLI11 help text lists under "Options:", `-h,--help` left out.
std::vector<std::string> optionsOf(const std::string& help) {
  static const std::regex option(R"(^\s+((?:-[A-Za-z0-9],)?--?[A-Za-z][A-Za-z0-9-]*))");
  std::vector<std::string> options;
  std::istringstream lines(help);
  std::string line;
  bool inOptions = false;
  while (std::getline(lines, line)) {
    if (!line.empty() && line[0] != ' ') inOptions = line == "Options:";
    std::smatch found;
    if (!inOptions || !std::regex_search(line, found, option)) continue;
    std::string names = found[1];
    for (size_t start = 0; start <= names.size();) {
      size_t comma = std::min(names.find(',', start), names.size());
      std::string name = names.substr(start, comma - start);
      if (name != "-h" && name != "--help") options.push_back(name);
      start = comma + 1;
    }
  }
  return options;
}

}  // namespace

std::string readSource(const std::string& relative) {
  std::ifstream file(fs::path(GXC_SOURCE_DIR) / relative, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> opTableProblems(const std::string& modelFormat, const std::string& ir) {
  std::vector<std::string> problems;
  checkOpTable(modelFormat, "docs/model-format.md", "ops: model", true, problems);
  checkOpTable(ir, "docs/ir.md", "ops: internal", false, problems);
  for (OpKind kind : allOpKinds())
    for (const AttrSpec& spec : opSchema(kind).attrs)
      if (spec.compilerOnly && !mentions(withoutCodeBlocks(ir), std::string(spec.name)))
        problems.push_back(
            fmt::format("docs/ir.md: attribute '{}' of op '{}', which passes set, "
                        "is not described",
                        spec.name, opName(kind)));
  return problems;
}

std::vector<std::string> passTableProblems(const std::string& ir) {
  std::vector<std::string> problems;
  std::set<std::string> documented;
  for (const std::vector<std::string>& row : markedTable(ir, "docs/ir.md", "passes", problems))
    for (const std::string& name : backticked(row[0])) documented.insert(name);
  std::vector<std::string_view> registered = registeredPassNames();
  for (std::string_view pass : registered) {
    if (!documented.count(std::string(pass)))
      problems.push_back(fmt::format("docs/ir.md: pass '{}' has no row in the pass table", pass));
    if (!fs::exists(fs::path(GXC_SOURCE_DIR) / "tests" / "lit" / fmt::format("{}.gxir", pass)))
      problems.push_back(fmt::format("pass '{}' has no lit test tests/lit/{}.gxir", pass, pass));
  }
  for (const std::string& name : documented)
    if (std::find(registered.begin(), registered.end(), name) == registered.end())
      problems.push_back(
          fmt::format("docs/ir.md: the pass table names '{}', no registered pass", name));
  return problems;
}

std::vector<std::string> cliOptionProblems(const std::string& cli) {
  std::vector<std::string> problems;
  std::map<std::string, std::string> helps = {
      {"gxc run", helpOf(false, {"gxc", "run", "--help"})},
      {"gxc compile", helpOf(false, {"gxc", "compile", "--help"})},
      {"gxc devices", helpOf(false, {"gxc", "devices", "--help"})},
      {"gxc-opt", helpOf(true, {"gxc-opt", "--help"})}};
  for (const auto& [command, help] : helps) {
    std::vector<std::string> options = optionsOf(help);
    if (options.empty()) problems.push_back(fmt::format("`{} --help` lists no option", command));
    if (cli.find("`" + command) == std::string::npos)
      problems.push_back(fmt::format("docs/cli.md: the command `{}` is not described", command));
    for (const std::string& option : options)
      if (cli.find("`" + option) == std::string::npos)
        problems.push_back(
            fmt::format("docs/cli.md: option {} of `{}` is not described", option, command));
  }
  return problems;
}

std::vector<std::string> environmentVariablesRead() {
  static const std::regex getenv(R"re(getenv\("(GXC_[A-Z0-9_]+)"\))re");
  std::set<std::string> names;
  for (const char* folder :
       {"ir", "tensor", "target", "frontend", "passes", "codegen", "runtime", "tools"})
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(GXC_SOURCE_DIR) / folder)) {
      std::string extension = entry.path().extension().string();
      if (extension != ".cpp" && extension != ".h") continue;
      std::string text = readSource(fs::relative(entry.path(), GXC_SOURCE_DIR).string());
      for (std::sregex_iterator it(text.begin(), text.end(), getenv), end; it != end; ++it)
        names.insert((*it)[1]);
    }
  return {names.begin(), names.end()};
}

std::vector<std::string> linkProblems(const std::string& relativePath, const std::string& text) {
  static const std::regex link(R"(\]\(([^)\s]+)\))");
  std::vector<std::string> targets;
  for (std::sregex_iterator it(text.begin(), text.end(), link), end; it != end; ++it)
    targets.push_back((*it)[1]);
  for (const std::string& quoted : backticked(withoutCodeBlocks(text)))
    if (quoted.starts_with("../")) targets.push_back(quoted);
  fs::path root = fs::weakly_canonical(GXC_SOURCE_DIR);
  fs::path folder = (root / relativePath).parent_path();
  std::vector<std::string> problems;
  for (std::string target : targets) {
    if (target.starts_with("http://") || target.starts_with("https://") || target[0] == '#')
      continue;
    target = target.substr(0, target.find('#'));
    fs::path resolved = fs::weakly_canonical(folder / target);
    auto [rootEnd, inside] = std::mismatch(root.begin(), root.end(), resolved.begin());
    if (rootEnd != root.end())
      problems.push_back(
          fmt::format("{}: '{}' points outside the repository", relativePath, target));
    else if (!fs::exists(resolved))
      problems.push_back(fmt::format("{}: '{}' does not exist", relativePath, target));
  }
  return problems;
}

std::vector<std::string> completeModelExamples(const std::string& markdown) {
  std::vector<std::string> models;
  size_t start = 0;
  while ((start = markdown.find("```yaml\n", start)) != std::string::npos) {
    start += 8;
    size_t end = markdown.find("```", start);
    if (end == std::string::npos) break;
    std::string block = markdown.substr(start, end - start);
    if (block.starts_with("gxc: 1")) models.push_back(block);
    start = end + 3;
  }
  return models;
}

}  // namespace gxc::docs
