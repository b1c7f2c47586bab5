// How failures on the streams become gxc errors: which failure is the cause, and where it
// is reported (at the failing layer under launch blocking, at synchronization otherwise).
#include <optional>
#include <string_view>

#include "runtime/sim/sim_run_state.h"

namespace gxc {

std::exception_ptr SimExecutor::describeFailure(size_t opIndex, std::exception_ptr original,
                                                bool whereItHappened) const {
  const ScheduledOp& scheduled = schedule_.ops[opIndex];
  const Op& op = *scheduled.op;
  const std::string& stream = schedule_.streams[scheduled.stream].name;
  try {
    std::rethrow_exception(original);
  } catch (const Error& error) {
    if (!whereItHappened)
      return std::make_exception_ptr(
          Error(error.kind(), error.loc(),
                fmt::format("error on stream {}, reported when the run synchronized "
                            "(GXC_LAUNCH_BLOCKING=1 reports it where it happens): {}",
                            stream, error.message())));
    std::string layer = fmt::format("layer '{}'", op.layerName());
    std::string message = error.message().find(layer) == std::string::npos
                              ? fmt::format("{}: {}", layer, error.message())
                              : error.message();
    SourceLoc loc = error.loc().known() ? error.loc() : op.loc;
    return std::make_exception_ptr(
        Error(error.kind(), loc,
              fmt::format("{} (on {}, stream {})", message, op.device().str(), stream)));
  } catch (...) {
    return original;  // a gxc bug or the host out of memory: passed on as it is
  }
}

void SimExecutor::synchronizeAll(std::exception_ptr& failure) {
  // Every stream is drained, whatever failed, so no task is left running. Of the kernel
  // errors, the one of the earliest op is the cause: later ones may be its consequences.
  std::optional<std::pair<size_t, std::exception_ptr>> first;
  std::exception_ptr other;
  for (auto& stream : streams_) {
    try {
      stream->synchronize();
    } catch (const KernelFailure& kernel) {
      if (!first || kernel.opIndex < first->first) first.emplace(kernel.opIndex, kernel.original);
    } catch (...) {
      if (!other) other = std::current_exception();
    }
  }
  if (failure) return;
  if (first)
    failure = describeFailure(first->first, first->second, config_.launchBlocking);
  else
    failure = other;
}

}  // namespace gxc
