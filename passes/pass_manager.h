// Runs a list of passes in order, with the IR dumps and timings users ask for, and the
// verifier after the last pass (after every pass with GXC_VERIFY_EACH_PASS=1, as the tests
// run).
#pragma once

#include <chrono>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace gxc {

// Whether GXC_VERIFY_EACH_PASS is set to something other than "" or "0".
bool verifyEachPassFromEnvironment();

struct PassManagerOptions {
  std::string printIrAfter;  // a pass name, or "all"; printed to `irStream`
  std::string dumpIrDir;     // writes DIR/NN-PASS.gxir after every pass
  bool timePasses = false;   // a table of wall times on `irStream`
  std::ostream* irStream = nullptr;
  // The IR verifier after every pass, not only after the last: what the test suite runs
  // with (GXC_VERIFY_EACH_PASS=1), at about a quarter of a large compile's time.
  bool verifyEachPass = verifyEachPassFromEnvironment();
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options = {});
  // The passes named, in order (`defaultPipeline()`, say): add() for each.
  explicit PassManager(const std::vector<std::string>& passNames, PassManagerOptions options = {});
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
