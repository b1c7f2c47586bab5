#include "codegen/host_kernel_library.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "codegen/cuda_source.h"
#include "ir/diagnostic.h"
#include "ir/progress.h"

extern char** environ;

namespace gxc {
namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void writeFile(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush())
    runtimeError({}, "cannot write {} to build the generated kernels", path.string());
}

// A private directory under $TMPDIR, removed with everything in it when this goes away.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = (fs::path(tmp && *tmp ? tmp : "/tmp") / "gxc-kernels-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      runtimeError({}, "cannot create a temporary directory for the generated kernels ({})",
                   pattern);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

struct Finished {
  int status = -1;     // exit status; -1 when it could not start or died of a signal
  std::string output;  // stdout and stderr together
};

// Runs `argv` with stdout and stderr into a file: no shell, so no quoting of paths.
Finished runProcess(const std::vector<std::string>& argv, const fs::path& outputFile) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, outputFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  Finished finished;
  if (error != 0) {
    finished.output = fmt::format("cannot run {}: {}", argv[0], std::strerror(error));
    return finished;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  finished.output = readFile(outputFile);
  finished.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return finished;
}

// `compiler --version`, once per compiler per process: part of every cache key, so a new
// compiler builds anew.
std::string compilerVersion(const std::string& compiler) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = versions.find(compiler);
  if (it != versions.end()) return it->second;
  ScratchDir scratch;
  Finished run = runProcess({compiler, "--version"}, scratch.path() / "version.txt");
  if (run.status != 0)
    runtimeError({}, "the host compiler '{}' does not run ({}); set GXC_HOST_CXX to a C++ compiler",
                 compiler, run.output.substr(0, run.output.find('\n')));
  return versions[compiler] = run.output;
}

// The line a user needs: the first that says "error", else the first.
std::string firstErrorLine(const std::string& output) {
  std::istringstream lines(output);
  std::string line, first;
  while (std::getline(lines, line)) {
    if (first.empty() && !line.empty()) first = line;
    if (line.find("error") != std::string::npos) return line;
  }
  return first.empty() ? "no output" : first;
}

void runCompiler(std::vector<std::string> argv, const fs::path& scratch) {
  Finished run = runProcess(argv, scratch / "compiler.txt");
  if (run.status != 0)
    runtimeError({}, "the host compiler failed on the generated kernels: {}",
                 firstErrorLine(run.output));
}

// `flags` build and link; `compileOnly` (the emulation's checks) only compile, in a step of its
// own, so that no sanitizer runtime is linked in: the header defines the handlers it calls.
std::string compileSharedObject(const std::string& text, const std::string& compiler,
                                const std::vector<std::string>& flags,
                                const std::vector<std::string>& compileOnly) {
  ScratchDir scratch;
  writeFile(scratch.path() / "gxc_kernel.h", kernelHeaderText());
  writeFile(scratch.path() / "kernels.cpp", text);
  std::string source = (scratch.path() / "kernels.cpp").string();
  std::string object = (scratch.path() / "kernels.so").string();
  std::vector<std::string> argv{compiler};
  argv.insert(argv.end(), flags.begin(), flags.end());
  if (!compileOnly.empty()) {
    std::vector<std::string> compile = argv;
    compile.insert(compile.end(), compileOnly.begin(), compileOnly.end());
    std::string unit = (scratch.path() / "kernels.o").string();
    compile.insert(compile.end(), {"-c", "-I", scratch.path().string(), "-o", unit, source});
    runCompiler(compile, scratch.path());
    source = unit;
  }
  argv.insert(argv.end(), {"-I", scratch.path().string(), "-o", object, source});
  runCompiler(argv, scratch.path());
  return readFile(object);
}

}  // namespace

std::string hostCompiler() {
  const char* fromEnvironment = std::getenv("GXC_HOST_CXX");
  return fromEnvironment && *fromEnvironment ? fromEnvironment : GXC_HOST_CXX_DEFAULT;
}

namespace {

// The -march flag of the machine's vector instructions; empty where gxc knows none.
std::string hostInstructionSet() {
#if defined(__x86_64__)
  // The x86-64 levels: named, unlike -march=native, so that the flags (a part of the cache
  // key) say which instructions a cached library uses, and a library built on an AVX-512
  // machine is never loaded on one without.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return "-march=x86-64-v4";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("bmi2"))
    return "-march=x86-64-v3";
  return "-march=x86-64-v2";
#else
  return {};  // another architecture: its compiler's default target
#endif
}

}  // namespace

const std::vector<std::string>& hostCompilerFlags() {
  // The machine's vector instructions, and -O2: the large elementwise kernels' loops are marked
  // `omp simd` (GXC_GRID_STRIDE_SIMD) and vectorize without -O3, which doubled the
  // time of every host build of a graph's kernels. -ffp-contract=off: no fused multiply-add,
  // whatever the instruction set, so that a kernel rounds as NVRTC's build of it does
  // (--fmad=false, codegen/nvrtc_compiler.cpp); without -ffast-math, vectorizing never
  // reorders a sum. -fno-math-errno: no kernel reads errno, and a sqrtf that must set it is a
  // library call in every lane, which keeps batch_norm's loop scalar (its results are the
  // same: sqrt is correctly rounded either way). -fopenmp: gxc_host_launch spreads blocks
  // over the cores, and `omp simd`.
  static const std::vector<std::string> flags = [] {
    std::vector<std::string> all{
        "-std=c++17", "-O2",  "-ffp-contract=off", "-fno-math-errno", "-fopenmp",
        "-shared",    "-fPIC"};
    if (std::string isa = hostInstructionSet(); !isa.empty()) all.insert(all.begin() + 2, isa);
    return all;
  }();
  return flags;
}

HostKernelLibrary::HostKernelLibrary(const std::string& text, KernelCache& cache,
                                     bool emulateBlocks) {
  std::string compiler = hostCompiler();
  std::vector<std::string> flags = hostCompilerFlags();
  std::vector<std::string> compileOnly;
  // Emulating GPU blocks, the compiler's bounds checks report a shared array indexed out of
  // its bounds, and its thread-sanitizer instrumentation calls the memory checks before every
  // load and store (gxc_kernel_emulation.h and gxc_kernel_memcheck.h are their handlers).
  if (emulateBlocks)
    compileOnly = {"-DGXC_EMULATE_BLOCKS", "-fsanitize=bounds", "-fsanitize=thread"};
  std::string flagText;
  for (const std::string& flag : flags) flagText += flag + " ";
  for (const std::string& flag : compileOnly) flagText += flag + " ";
  std::vector<std::string> key{text, std::string(kernelHeaderText()), compiler,
                               compilerVersion(compiler), flagText};
  std::string object = cache.getOrBuild("host-so", key, [&] {
    ProgressTask building(
        fmt::format("compiling {} generated kernels for the host{}", definedKernelCount(text),
                    emulateBlocks ? ", emulating GPU blocks" : ""),
        0);
    return compileSharedObject(text, compiler, flags, compileOnly);
  });
  // dlopen needs a file: a private one, unlinked as soon as it is mapped.
  ScratchDir scratch;
  fs::path file = scratch.path() / "kernels.so";
  writeFile(file, object);
  handle_ = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) runtimeError({}, "cannot load the generated kernels: {}", ::dlerror());
  if (emulateBlocks) {
    emulatedLaunch_ =
        reinterpret_cast<decltype(emulatedLaunch_)>(::dlsym(handle_, "gxc_emulated_launch"));
    GXC_CHECK(emulatedLaunch_, "the generated kernels have no gxc_emulated_launch");
    return;
  }
  launch_ = reinterpret_cast<decltype(launch_)>(::dlsym(handle_, "gxc_host_launch"));
  GXC_CHECK(launch_, "the generated kernels have no gxc_host_launch");
}

HostKernelLibrary::~HostKernelLibrary() {
  if (handle_) ::dlclose(handle_);
}

HostKernelLibrary::Kernel HostKernelLibrary::kernel(const std::string& name) const {
  auto found = reinterpret_cast<Kernel>(::dlsym(handle_, name.c_str()));
  GXC_CHECK(found, "the generated kernels have no kernel {}", name);
  return found;
}

void HostKernelLibrary::launch(Kernel kernel, const HostKernelArgs& args, int64_t grid) const {
  GXC_CHECK(launch_, "a host launch through a library that emulates GPU blocks");
  GXC_CHECK(grid >= 1 && grid <= 0xffffffffll, "a host launch of {} blocks", grid);
  launch_(kernel, args, static_cast<unsigned>(grid));
}

std::string HostKernelLibrary::emulatedLaunch(
    Kernel kernel, const HostKernelArgs& args, int64_t grid, int64_t block,
    const std::vector<std::pair<const void*, int64_t>>& buffers) const {
  GXC_CHECK(emulatedLaunch_, "an emulated launch through a library that does not emulate");
  GXC_CHECK(grid >= 1 && grid <= 0xffffffffll && block >= 1 && block <= 1024,
            "an emulated launch of {} blocks of {} threads", grid, block);
  std::vector<unsigned long long> ranges;
  for (const auto& [start, bytes] : buffers) {
    ranges.push_back(reinterpret_cast<uintptr_t>(start));
    ranges.push_back(static_cast<unsigned long long>(bytes));
  }
  char error[1024] = {};
  if (emulatedLaunch_(kernel, args, static_cast<unsigned>(grid), static_cast<unsigned>(block),
                      ranges.data(), static_cast<unsigned>(buffers.size()), error,
                      sizeof error) == 0)
    return {};
  return error;
}

}  // namespace gxc
