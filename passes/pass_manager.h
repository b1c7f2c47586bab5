// Runs a list of passes in order, with the IR dumps and timings users ask for, and the
// verifier after every pass in debug and test builds.
#pragma once

#include <chrono>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace gxc {

struct PassManagerOptions {
  std::string printIrAfter;  // a pass name, or "all"; printed to `irStream`
  std::string dumpIrDir;     // writes DIR/NN-PASS.gxir after every pass
  bool timePasses = false;   // a table of wall times on `irStream`
  std::ostream* irStream = nullptr;
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options = {});
  // An unknown name is a usage error listing the valid ones.
  void add(std::string_view passName);
  void add(std::unique_ptr<Pass> pass);
  const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }
  void run(Graph& graph, const PassContext& context) const;

 private:
  void afterPass(const Graph& graph, const Pass& pass, size_t index) const;

  PassManagerOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

// Splits "a,b,c" and checks every name, before anything runs.
std::vector<std::string> parsePassList(const std::string& list);

}  // namespace gxc
