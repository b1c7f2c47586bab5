// gxc_kernel_emulation.h: the third part of gxc_kernel.h, spliced in by the build as
// gxc_kernel_numbers.h is. Compiled only when the host build defines GXC_EMULATE_BLOCKS
// (`gxc run --emulate-gpu-blocks`): it stands in for what NVRTC provides, so that the host runs
// each kernel's GPU code, byte for byte, with the GPU's launch configuration.
//
// Every CUDA thread of a block is a fiber (ucontext) on the launching OS thread, as HIP-CPU
// runs HIP on CPUs. A fiber runs until it reaches __syncthreads, a warp shuffle, or its end;
// then the next one runs. When every thread of the block waits at the same barrier, all go
// on; when every lane a shuffle's mask names waits at that shuffle, each gets the value of
// the lane it reads. `__shared__` variables are one per launch (static), which is one block at
// a time. What a GPU would not run is reported, naming the block, the thread and the source
// line, and the launch stops: a barrier that some thread of the block never reaches (it exited,
// or waits at another), a shuffle whose mask names a lane that does not exist or has exited,
// lanes that meet at different shuffles, an array of known size (a `__shared__` one) indexed
// out of its bounds; and, by the memory checks of the fourth part (gxc_kernel_memcheck.h), a
// race on shared memory or a global access outside the launch's tensors. One launch at a time
// per loaded library.
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#define __global__
#define __device__
#define __forceinline__ inline
// Every `__shared__` variable in one section: the memory checks know them by their address.
#define __shared__ static __attribute__((section("gxc_shared")))
#define GXC_FN static inline
// The emulator's own code, which the memory checks' instrumentation must not watch.
#define GXC_EMU_FN __attribute__((no_sanitize_thread))

struct gxc_dim3 {
  unsigned x, y, z;
};
// Plain globals, not thread-locals: a launch's threads are fibers of one OS thread. Not
// static either, so that the compiler reloads them after any call that may switch fibers.
extern "C" {
gxc_dim3 blockIdx = {0, 0, 0};
gxc_dim3 gridDim = {1, 1, 1};
gxc_dim3 threadIdx = {0, 0, 0};
gxc_dim3 blockDim = {1, 1, 1};
}

#define GXC_STRINGIFY2(x) #x
#define GXC_STRINGIFY(x) GXC_STRINGIFY2(x)
#define GXC_SITE __FILE__ ":" GXC_STRINGIFY(__LINE__)

enum { GXC_EMU_READY, GXC_EMU_AT_BARRIER, GXC_EMU_AT_SHUFFLE, GXC_EMU_DONE };
enum { GXC_SHFL_DOWN, GXC_SHFL_XOR, GXC_SHFL_IDX };

struct GxcFiber {
  ucontext_t context;
  int state;
  const char* site;  // where it waits: "FILE:LINE"
  int kind, arg;     // its shuffle
  unsigned mask;
  unsigned long long value, result;
};

struct GxcEmulator {
  ucontext_t scheduler;
  GxcFiber* fibers;
  char* stacks;
  unsigned capacity;  // fibers (and stacks) allocated
  unsigned current;
  void (*kernel)(GxcArgs);
  GxcArgs args;
  unsigned epoch;  // counts the block's barriers: what two threads do in one epoch races
  int failed;
  char error[1024];
};

static GxcEmulator gxc_emu;
static pthread_mutex_t gxc_emu_lock = PTHREAD_MUTEX_INITIALIZER;
static const size_t gxc_emu_stack_bytes = 256 * 1024;

// "FILE:LINE" without the directory, which is a temporary one.
GXC_EMU_FN static const char* gxc_emu_where(const char* site) {
  const char* slash = strrchr(site, '/');
  return slash ? slash + 1 : site;
}

GXC_EMU_FN static void gxc_emu_yield() {
  swapcontext(&gxc_emu.fibers[gxc_emu.current].context, &gxc_emu.scheduler);
}

extern "C" GXC_EMU_FN void gxc_emu_syncthreads(const char* site) {
  GxcFiber& self = gxc_emu.fibers[gxc_emu.current];
  self.state = GXC_EMU_AT_BARRIER;
  self.site = site;
  gxc_emu_yield();
}

extern "C" GXC_EMU_FN unsigned long long gxc_emu_shuffle(int kind, unsigned mask,
                                                         unsigned long long value, int arg,
                                                         const char* site) {
  GxcFiber& self = gxc_emu.fibers[gxc_emu.current];
  self.state = GXC_EMU_AT_SHUFFLE;
  self.kind = kind;
  self.mask = mask;
  self.value = value;
  self.arg = arg;
  self.site = site;
  gxc_emu_yield();
  return self.result;
}

template <typename T>
GXC_FN T gxc_emu_shfl(int kind, unsigned mask, T value, int arg, const char* site) {
  unsigned long long bits = 0;
  memcpy(&bits, &value, sizeof value);
  bits = gxc_emu_shuffle(kind, mask, bits, arg, site);
  T out;
  memcpy(&out, &bits, sizeof out);
  return out;
}

#define __syncthreads() gxc_emu_syncthreads(GXC_SITE)
#define __shfl_down_sync(mask, v, offset) gxc_emu_shfl(GXC_SHFL_DOWN, mask, v, offset, GXC_SITE)
#define __shfl_xor_sync(mask, v, offset) gxc_emu_shfl(GXC_SHFL_XOR, mask, v, offset, GXC_SITE)
#define __shfl_sync(mask, v, lane) gxc_emu_shfl(GXC_SHFL_IDX, mask, v, lane, GXC_SITE)

GXC_EMU_FN static void gxc_emu_fail(const char* text) {
  snprintf(gxc_emu.error, sizeof gxc_emu.error, "block %u: %s", blockIdx.x, text);
  gxc_emu.failed = 1;
}

// The compiler's bounds checks (-fsanitize=bounds, with no sanitizer runtime linked: these are
// its handlers, by the ABI of UBSan's): an array of known size, a `__shared__` one above all,
// indexed out of its bounds. The launch stops there, naming the thread, the index and the line.
struct GxcBoundsLocation {
  const char* file;
  unsigned line, column;
};
struct GxcBoundsType {
  unsigned short kind, info;  // info: bit 0 signed, the rest log2 of the width in bits
  char name[1];
};
struct GxcBoundsData {
  GxcBoundsLocation location;
  const GxcBoundsType* array;
  const GxcBoundsType* index;
};

extern "C" GXC_EMU_FN void __ubsan_handle_out_of_bounds(void* data, void* index) {
  const GxcBoundsData* bounds = (const GxcBoundsData*)data;
  unsigned width = 1u << (bounds->index->info >> 1);
  unsigned long long raw = (unsigned long long)index;
  long long value = (long long)raw;
  if ((bounds->index->info & 1u) && width < 64 && (raw >> (width - 1) & 1ull))
    value = (long long)(raw | ~((1ull << width) - 1));  // sign-extended
  char text[512];
  snprintf(text, sizeof text, "thread %u: index %lld is out of the bounds of %s at %s:%u:%u",
           threadIdx.x, value, bounds->array->name, gxc_emu_where(bounds->location.file),
           bounds->location.line, bounds->location.column);
  gxc_emu_fail(text);
  gxc_emu_yield();  // never resumed: the launch ends
}
extern "C" GXC_EMU_FN void __ubsan_handle_out_of_bounds_abort(void* data, void* index) {
  __ubsan_handle_out_of_bounds(data, index);
}

extern "C" GXC_EMU_FN void gxc_emu_trampoline() {
  gxc_emu.kernel(gxc_emu.args);
  gxc_emu.fibers[gxc_emu.current].state = GXC_EMU_DONE;  // uc_link resumes the scheduler
}

// The lanes one warp's shuffle exchanges, once every lane its mask names waits there.
// Returns 1 if it released the warp, 0 if some lane is not there yet, -1 on an error.
GXC_EMU_FN static int gxc_emu_resolve_warp(unsigned warp, unsigned block) {
  GxcFiber* f = gxc_emu.fibers;
  unsigned first = warp * 32, end = first + 32 < block ? first + 32 : block;
  unsigned leader = first;
  while (leader < end && f[leader].state != GXC_EMU_AT_SHUFFLE) ++leader;
  if (leader == end) return 0;
  char text[512];
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (!(f[leader].mask >> lane & 1u)) continue;
    unsigned t = first + lane;
    if (t >= block) {
      snprintf(text, sizeof text,
               "thread %u: the shuffle at %s names lane %u in its mask (0x%08x), but thread %u "
               "does not exist (the block has %u threads)",
               leader, gxc_emu_where(f[leader].site), lane, f[leader].mask, t, block);
      gxc_emu_fail(text);
      return -1;
    }
    if (f[t].state == GXC_EMU_DONE) {
      snprintf(text, sizeof text,
               "thread %u: the shuffle at %s names lane %u in its mask, but thread %u has "
               "exited",
               leader, gxc_emu_where(f[leader].site), lane, t);
      gxc_emu_fail(text);
      return -1;
    }
    if (f[t].state != GXC_EMU_AT_SHUFFLE) return 0;
    if (strcmp(f[t].site, f[leader].site) != 0 || f[t].mask != f[leader].mask) {
      snprintf(text, sizeof text, "threads %u and %u of one warp shuffle at %s and %s", leader, t,
               gxc_emu_where(f[leader].site), gxc_emu_where(f[t].site));
      gxc_emu_fail(text);
      return -1;
    }
  }
  for (unsigned lane = 0; lane < 32; ++lane) {
    unsigned t = first + lane;
    if (!(f[leader].mask >> lane & 1u)) continue;
    unsigned from = lane;
    if (f[t].kind == GXC_SHFL_DOWN)
      from = lane + (unsigned)f[t].arg < 32 ? lane + (unsigned)f[t].arg : lane;
    else if (f[t].kind == GXC_SHFL_XOR)
      from = (lane ^ (unsigned)f[t].arg) & 31u;
    else
      from = (unsigned)f[t].arg & 31u;
    if (!(f[leader].mask >> from & 1u)) {
      snprintf(text, sizeof text,
               "thread %u reads lane %u at the shuffle at %s, which its mask (0x%08x) leaves out",
               t, from, gxc_emu_where(f[t].site), f[t].mask);
      gxc_emu_fail(text);
      return -1;
    }
    f[t].result = f[first + from].value;
  }
  for (unsigned lane = 0; lane < 32; ++lane)
    if (f[leader].mask >> lane & 1u) f[first + lane].state = GXC_EMU_READY;
  return 1;
}

// Runs the block's threads until all have returned; 0, or -1 with gxc_emu.error.
GXC_EMU_FN static int gxc_emu_run_block(unsigned block) {
  GxcFiber* f = gxc_emu.fibers;
  char text[512];
  for (;;) {
    for (unsigned t = 0; t < block; ++t) {
      if (f[t].state != GXC_EMU_READY) continue;
      gxc_emu.current = t;
      threadIdx.x = t;
      swapcontext(&gxc_emu.scheduler, &f[t].context);
      if (gxc_emu.failed) return -1;
    }
    unsigned done = 0, atBarrier = 0, atShuffle = 0;
    for (unsigned t = 0; t < block; ++t) {
      done += f[t].state == GXC_EMU_DONE;
      atBarrier += f[t].state == GXC_EMU_AT_BARRIER;
      atShuffle += f[t].state == GXC_EMU_AT_SHUFFLE;
    }
    if (done == block) return 0;
    int released = 0;
    for (unsigned warp = 0; warp * 32 < block; ++warp) {
      int resolved = gxc_emu_resolve_warp(warp, block);
      if (resolved < 0) return -1;
      released |= resolved;
    }
    if (released) continue;
    unsigned waiting = 0;
    while (f[waiting].state != GXC_EMU_AT_BARRIER && f[waiting].state != GXC_EMU_AT_SHUFFLE)
      ++waiting;
    for (unsigned t = 0; t < block; ++t) {
      if (f[t].state == GXC_EMU_DONE && atBarrier > 0) {
        snprintf(text, sizeof text,
                 "thread %u waits at the __syncthreads at %s, which thread %u never reaches: it "
                 "has exited (a barrier in a branch that not every thread takes)",
                 waiting, gxc_emu_where(f[waiting].site), t);
        gxc_emu_fail(text);
        return -1;
      }
      if (f[t].state != GXC_EMU_DONE &&
          (f[t].state != f[waiting].state || strcmp(f[t].site, f[waiting].site) != 0)) {
        snprintf(text, sizeof text,
                 "thread %u waits at the %s at %s and thread %u at the %s at %s: they never "
                 "meet",
                 waiting, f[waiting].state == GXC_EMU_AT_BARRIER ? "__syncthreads" : "shuffle",
                 gxc_emu_where(f[waiting].site), t,
                 f[t].state == GXC_EMU_AT_BARRIER ? "__syncthreads" : "shuffle",
                 gxc_emu_where(f[t].site));
        gxc_emu_fail(text);
        return -1;
      }
    }
    if (atShuffle > 0) {  // every lane at one shuffle, yet no warp resolved: cannot happen
      gxc_emu_fail("a shuffle that no warp can complete");
      return -1;
    }
    ++gxc_emu.epoch;  // what threads did before the barrier no longer races with what follows
    for (unsigned t = 0; t < block; ++t) f[t].state = GXC_EMU_READY;
  }
}

// When the library is unloaded: the threads' stacks and states.
__attribute__((destructor)) GXC_EMU_FN static void gxc_emu_release() {
  if (gxc_emu.stacks) munmap(gxc_emu.stacks, gxc_emu.capacity * gxc_emu_stack_bytes);
  free(gxc_emu.fibers);
  gxc_emu.stacks = nullptr;
  gxc_emu.fibers = nullptr;
  gxc_emu.capacity = 0;
}

#include "gxc_kernel_memcheck.h"

// Runs `kernel` as a GPU launch of `grid` blocks of `block` threads, one block at a time, its
// global accesses held to `buffers` ((start, bytes) pairs, `count` of them: the output first,
// then the inputs). Returns 0, or 1 with one line in `error`.
extern "C" GXC_EMU_FN int gxc_emulated_launch(void (*kernel)(GxcArgs), GxcArgs args, unsigned grid,
                                              unsigned block, const unsigned long long* buffers,
                                              unsigned count, char* error,
                                              unsigned long errorBytes) {
  pthread_mutex_lock(&gxc_emu_lock);
  if (block > gxc_emu.capacity) {
    if (gxc_emu.stacks) munmap(gxc_emu.stacks, gxc_emu.capacity * gxc_emu_stack_bytes);
    free(gxc_emu.fibers);
    void* stacks = mmap(nullptr, block * gxc_emu_stack_bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    gxc_emu.fibers = (GxcFiber*)calloc(block, sizeof(GxcFiber));
    if (stacks == MAP_FAILED || !gxc_emu.fibers) {
      gxc_emu.stacks = nullptr;
      gxc_emu.capacity = 0;
      snprintf(error, errorBytes, "cannot allocate the stacks of %u emulated threads", block);
      pthread_mutex_unlock(&gxc_emu_lock);
      return 1;
    }
    gxc_emu.stacks = (char*)stacks;
    gxc_emu.capacity = block;
  }
  gxc_emu.kernel = kernel;
  gxc_emu.args = args;
  gxc_emu.failed = 0;
  gridDim.x = grid;
  blockDim.x = block;
  int status = 0;
  gxc_check_begin(buffers, count);
  for (unsigned b = 0; b < grid && status == 0; ++b) {
    blockIdx.x = b;
    ++gxc_emu.epoch;  // a new block: its shared memory is its own
    for (unsigned t = 0; t < block; ++t) {
      GxcFiber& fiber = gxc_emu.fibers[t];
      getcontext(&fiber.context);
      fiber.context.uc_stack.ss_sp = gxc_emu.stacks + t * gxc_emu_stack_bytes;
      fiber.context.uc_stack.ss_size = gxc_emu_stack_bytes;
      fiber.context.uc_link = &gxc_emu.scheduler;
      makecontext(&fiber.context, gxc_emu_trampoline, 0);
      fiber.state = GXC_EMU_READY;
    }
    status = gxc_emu_run_block(block);
  }
  gxc_check.running = 0;
  if (status != 0) snprintf(error, errorBytes, "%s", gxc_emu.error);
  pthread_mutex_unlock(&gxc_emu_lock);
  return status != 0;
}
