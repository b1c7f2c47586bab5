#include "passes/pass_manager.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/ranges.h>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pass_registry.h"

namespace gxc {

PassManager::PassManager(PassManagerOptions options) : options_(std::move(options)) {
  const std::string& after = options_.printIrAfter;
  if (!after.empty() && after != "all" && !createPass(after))
    usageError("--print-ir-after: unknown pass '{}' (passes: all, {})", after,
               fmt::join(registeredPassNames(), ", "));
}

PassManager::PassManager(const std::vector<std::string>& passNames, PassManagerOptions options)
    : PassManager(std::move(options)) {
  for (const std::string& name : passNames) add(name);
}

void PassManager::add(std::string_view passName) {
  std::unique_ptr<Pass> pass = createPass(passName);
  if (!pass)
    usageError("unknown pass '{}' (passes: {})", passName, fmt::join(registeredPassNames(), ", "));
  add(std::move(pass));
}

void PassManager::add(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }

bool verifyEachPassFromEnvironment() {
  const char* value = std::getenv("GXC_VERIFY_EACH_PASS");
  return value && *value && std::string_view(value) != "0";
}

void PassManager::afterPass(const Graph& graph, const Pass& pass, size_t index) const {
  // The graph a pipeline hands on is always verified; the ones between passes when asked.
  if (options_.verifyEachPass || index + 1 == passes_.size()) {
    std::vector<std::string> problems = verifyGraph(graph);
    GXC_CHECK(problems.empty(), "IR invalid after pass {}: {}", pass.name(),
              fmt::join(problems, "; "));
  }
  if (options_.irStream && (options_.printIrAfter == "all" || options_.printIrAfter == pass.name()))
    *options_.irStream << "// ----- IR after " << pass.name() << " -----\n" << printGraph(graph);
  if (!options_.dumpIrDir.empty()) {
    auto path = std::filesystem::path(options_.dumpIrDir) /
                fmt::format("{:02}-{}.gxir", index + 1, pass.name());
    std::ofstream out(path);
    out << printGraph(graph);
    if (!out) runtimeError({}, "--dump-ir: cannot write {}", path.string());
  }
}

void PassManager::run(Graph& graph, const PassContext& context) const {
  if (!options_.dumpIrDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options_.dumpIrDir, ec);
    if (ec) runtimeError({}, "--dump-ir: cannot create {}: {}", options_.dumpIrDir, ec.message());
  }
  std::vector<std::pair<std::string_view, double>> times;
  for (size_t i = 0; i < passes_.size(); ++i) {
    auto start = std::chrono::steady_clock::now();
    passes_[i]->run(graph, context);
    std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
    times.emplace_back(passes_[i]->name(), elapsed.count());
    afterPass(graph, *passes_[i], i);
  }
  if (options_.timePasses && options_.irStream) {
    double total = 0;
    *options_.irStream << "===-- pass timing (wall, ms) --===\n";
    for (const auto& [name, ms] : times) {
      *options_.irStream << fmt::format("{:>10.3f}  {}\n", ms, name);
      total += ms;
    }
    *options_.irStream << fmt::format("{:>10.3f}  total\n", total);
  }
}

std::vector<std::string> parsePassList(const std::string& list) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(start, comma - start);
    if (!createPass(name))
      usageError("unknown pass '{}' (passes: {})", name, fmt::join(registeredPassNames(), ", "));
    names.push_back(name);
    start = comma + 1;
  }
  return names;
}

}  // namespace gxc
