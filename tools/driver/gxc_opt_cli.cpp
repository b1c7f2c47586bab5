#include <iostream>
#include <optional>

#include <fmt/ranges.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "passes/pass_registry.h"
#include "target/byte_size.h"
#include "tools/driver/compile_session.h"
#include "tools/driver/device_list.h"
#include "tools/driver/error_handling.h"
#include "tools/driver/gxc_cli.h"
#include "tools/driver/unknown_options.h"
#include "tools/driver/version.h"

namespace gxc {
namespace {

// The verifier names the op a problem is about ("op %c: ..."): it is reported at the line
// and column where the text defines %c; a problem of the whole graph, at the file.
SourceLoc problemPosition(const std::string& problem, const std::string& fileName,
                          const TextPositions& positions) {
  constexpr std::string_view kOpPrefix = "op %";
  if (problem.starts_with(kOpPrefix)) {
    size_t end = problem.find(": ");
    auto found = positions.find(problem.substr(kOpPrefix.size(), end - kOpPrefix.size()));
    if (end != std::string::npos && found != positions.end()) return found->second;
  }
  return {fileName, 0, 0};
}

}  // namespace

int gxcOptMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  return reportErrors("gxc-opt", err, [&]() -> int {
    CLI::App app("gxc-opt: textual IR in, passes, textual IR out", "gxc-opt");
    app.set_version_flag("--version", "gxc-opt " + versionString(),
                         "print gxc-opt's version and exit");
    std::string path, passList, devices = "cpu", deviceMemory;
    bool strict = false;
    app.add_option("file", path, "a .gxir file, or - for stdin")->required();
    app.add_option("-p,--passes", passList,
                   "PASS[,PASS...]: " + fmt::format("{}", fmt::join(registeredPassNames(), ", ")));
    // Passes need only the list of devices, not a platform: any GPU indices are accepted.
    app.add_option("--devices", devices, "the run's devices: cpu (default) or 0,1,...");
    app.add_flag("--strict", strict, "as gxc's --strict");
    std::string placement = "manual";
    bool explain = false;
    int microbatches = 0;
    app.add_option("--placement", placement,
                   "as gxc's --placement (manual, auto, data-parallel, pipeline)")
        ->check(CLI::IsMember({"manual", "auto", "data-parallel", "pipeline"}));
    CLI::Option* microbatchesOption =
        app.add_option("--microbatches", microbatches, "as gxc's --microbatches (pipeline)");
    app.add_flag("--explain", explain, "as gxc's --explain");
    double bucketMb = 25;
    app.add_option("--bucket-mb", bucketMb,
                   "as gxc train's --bucket-mb (replicate-update's gradient buckets, MB)")
        ->check(CLI::PositiveNumber);
    app.add_option("--device-memory", deviceMemory,
                   "MEM: memory of every GPU of --devices, as in --sim-gpus N:MEM (the host is "
                   "unlimited); without it nothing is refused for size");
    try {
      app.parse(argc, argv);
    } catch (const CLI::ExtrasError&) {
      refuseUnknownOption(app, {argv + 1, static_cast<size_t>(argc - 1)});
      throw;
    } catch (const CLI::CallForHelp&) {
      out << app.help();
      return 0;
    } catch (const CLI::CallForVersion& version) {
      out << version.what() << "\n";
      return 0;
    }
    if (microbatchesOption->count() > 0) checkMicrobatchesOption(placement, microbatches);
    // Check every pass name before reading anything: a typo is a usage error, status 2.
    std::vector<std::string> passes =
        passList.empty() ? std::vector<std::string>{} : parsePassList(passList);
    PassContext context;
    std::vector<Device> deviceList = parseDevicesOption(devices).devices();
    context.target = Target::of(deviceList);
    context.strict = strict;
    context.placement = placement;
    context.microbatches = microbatches;
    context.bucketBytes = std::max<int64_t>(1, static_cast<int64_t>(bucketMb * 1024 * 1024));
    if (explain)
      context.explain = [&err](const std::string& line) {
        err << "gxc-opt: explain: " << line << "\n";
      };
    if (!deviceMemory.empty()) {
      std::optional<int64_t> memoryBytes = parseByteSize(deviceMemory);
      if (!memoryBytes)
        usageError("--device-memory {}: expected a size such as 16GiB (units B, KiB, MiB, GiB)",
                   deviceMemory);
      context.target = Target::withGpuMemory(deviceList, *memoryBytes);
    }
    context.note = [&err](const std::string& text) { err << "gxc-opt: note: " << text << "\n"; };
    std::unique_ptr<Graph> graph;
    TextPositions positions;
    std::string fileName = path == "-" ? "<stdin>" : path;
    if (path == "-") {
      std::string text((std::istreambuf_iterator<char>(std::cin)),
                       std::istreambuf_iterator<char>());
      graph = parseGraph(text, fileName, &positions);
    } else {
      graph = parseGraphFile(path, &positions);
    }
    std::vector<std::string> problems = verifyGraph(*graph);
    if (!problems.empty())
      throw Error(ErrorKind::Model, problemPosition(problems.front(), fileName, positions),
                  "invalid IR: " + problems.front());
    PassManager(passes).run(*graph, context);
    out << printGraph(*graph);
    return 0;
  });
}

}  // namespace gxc
