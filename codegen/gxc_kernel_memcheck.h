// gxc_kernel_memcheck.h: the fourth part of gxc_kernel.h, spliced in by the build where
// gxc_kernel_emulation.h includes it: the memory checks of emulated GPU launches, as
// compute-sanitizer's memcheck and racecheck make them.
//
// The emulating build compiles the kernels with the compiler's thread-sanitizer instrumentation
// (-fsanitize=thread, in a compile step of its own: no sanitizer runtime is linked), which calls
// a function before every load and store of the kernel code; these are those functions. During
// a launch each access is held to what a GPU thread may touch:
//   - its own stack (locals), and the kernel library's own data (constants, blockIdx...);
//   - shared memory (every `__shared__` variable, gathered in the section "gxc_shared"): two
//     threads of the block touching the same word between two barriers, at least one of them
//     writing, is a race;
//   - global memory: the tensors the launch was given, each within its own bytes; anything
//     else (past a tensor's end, before its start) is out of bounds.
// The first fault stops the launch, naming the thread (and for a race, both threads).
#include <link.h>
#include <stdint.h>

extern "C" char __start_gxc_shared[] __attribute__((weak));
extern "C" char __stop_gxc_shared[] __attribute__((weak));

// Per 4-byte word of shared memory: the last writer and reader (thread + 1; a reader of ~0u:
// several) and the barrier epochs in which they touched it.
struct GxcShadowWord {
  unsigned writer, writeEpoch, reader, readEpoch;
};

struct GxcMemcheck {
  int running;                        // only a launch's kernel code is checked
  const unsigned long long* buffers;  // (start, bytes) pairs: the tensors of the launch
  unsigned bufferCount;
  GxcShadowWord* shadow;
  uintptr_t imageStart, imageEnd;  // the library's own loaded segments
};

static GxcMemcheck gxc_check;

GXC_EMU_FN static int gxc_check_find_image(struct dl_phdr_info* info, size_t, void*) {
  uintptr_t probe = (uintptr_t)&gxc_check;
  uintptr_t low = UINTPTR_MAX, high = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_LOAD) continue;
    uintptr_t start = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
    uintptr_t end = start + info->dlpi_phdr[i].p_memsz;
    low = start < low ? start : low;
    high = end > high ? end : high;
  }
  if (probe < low || probe >= high) return 0;
  gxc_check.imageStart = low;
  gxc_check.imageEnd = high;
  return 1;
}

// When the library is unloaded: what the checks allocated.
__attribute__((destructor)) GXC_EMU_FN static void gxc_check_release() {
  free(gxc_check.shadow);
  gxc_check.shadow = nullptr;
}

// Before a launch: the tensors it may touch, and (once) the shadow of shared memory.
GXC_EMU_FN static void gxc_check_begin(const unsigned long long* buffers, unsigned count) {
  if (!gxc_check.imageEnd) dl_iterate_phdr(gxc_check_find_image, nullptr);
  size_t words = (size_t)(__stop_gxc_shared - __start_gxc_shared + 3) / 4;
  if (!gxc_check.shadow && words > 0)
    gxc_check.shadow = (GxcShadowWord*)calloc(words, sizeof(GxcShadowWord));
  gxc_check.buffers = buffers;
  gxc_check.bufferCount = count;
  gxc_check.running = 1;
}

GXC_EMU_FN static void gxc_check_fail(const char* text) {
  gxc_check.running = 0;
  gxc_emu_fail(text);
  gxc_emu_yield();  // never resumed: the launch ends
}

GXC_EMU_FN static void gxc_check_shared(uintptr_t at, unsigned long bytes, int write) {
  unsigned me = gxc_emu.current + 1, epoch = gxc_emu.epoch;
  uintptr_t base = (uintptr_t)__start_gxc_shared;
  for (uintptr_t word = (at - base) / 4; word <= (at + bytes - 1 - base) / 4; ++word) {
    GxcShadowWord& s = gxc_check.shadow[word];
    unsigned other = 0;
    const char* before = "";
    if (s.writeEpoch == epoch && s.writer != me) {
      other = s.writer;
      before = "wrote";
    } else if (write && s.readEpoch == epoch && s.reader != me) {
      other = s.reader;
      before = "read";
    }
    if (other) {
      char text[512];
      if (other == ~0u)
        snprintf(text, sizeof text,
                 "thread %u writes shared memory at byte %lu, which several threads read since "
                 "the last __syncthreads: a race",
                 me - 1, (unsigned long)(word * 4));
      else
        snprintf(text, sizeof text,
                 "threads %u and %u race on shared memory at byte %lu: thread %u %s it after "
                 "thread %u %s it, with no __syncthreads between",
                 other - 1, me - 1, (unsigned long)(word * 4), me - 1, write ? "writes" : "reads",
                 other - 1, before);
      gxc_check_fail(text);
    }
    if (write) {
      s.writer = me;
      s.writeEpoch = epoch;
    } else {
      s.reader = s.readEpoch == epoch && s.reader != me ? ~0u : me;
      s.readEpoch = epoch;
    }
  }
}

GXC_EMU_FN static void gxc_check_access(const void* address, unsigned long bytes, int write) {
  if (!gxc_check.running) return;
  uintptr_t at = (uintptr_t)address;
  uintptr_t stacks = (uintptr_t)gxc_emu.stacks;
  if (at >= stacks && at < stacks + gxc_emu.capacity * gxc_emu_stack_bytes) return;
  if (at >= (uintptr_t)__start_gxc_shared && at < (uintptr_t)__stop_gxc_shared) {
    gxc_check_shared(at, bytes, write);
    return;
  }
  if (at >= gxc_check.imageStart && at < gxc_check.imageEnd) return;
  long nearest = -1;
  long long distance = 0;
  for (unsigned i = 0; i < gxc_check.bufferCount; ++i) {
    unsigned long long start = gxc_check.buffers[2 * i], size = gxc_check.buffers[2 * i + 1];
    if (at >= start && at + bytes <= start + size) return;
    long long past =
        at >= start ? (long long)(at + bytes - (start + size)) : (long long)at - (long long)start;
    if (nearest < 0 || (past < 0 ? -past : past) < (distance < 0 ? -distance : distance)) {
      nearest = i;
      distance = past;
    }
  }
  char text[512];
  if (nearest < 0)
    snprintf(text, sizeof text, "thread %u %s %lu bytes at %p, which is no tensor of the launch",
             gxc_emu.current, write ? "writes" : "reads", bytes, address);
  else
    snprintf(text, sizeof text,
             "thread %u %s %lu bytes at %p, out of bounds: %s %lld bytes %s argument %ld (%llu "
             "bytes%s)",
             gxc_emu.current, write ? "writes" : "reads", bytes, address,
             distance < 0 ? "starting" : "reaching", distance < 0 ? -distance : distance,
             distance < 0 ? "before the start of" : "past the end of", nearest,
             gxc_check.buffers[2 * nearest + 1], nearest == 0 ? ", the output" : "");
  gxc_check_fail(text);
}

// The instrumentation's entry points (ThreadSanitizer's ABI), for the accesses GCC emits.
extern "C" {
GXC_EMU_FN void __tsan_init() {}
GXC_EMU_FN void __tsan_func_entry(void*) {}
GXC_EMU_FN void __tsan_func_exit() {}
#define GXC_CHECK_SIZE(n)                                                           \
  GXC_EMU_FN void __tsan_read##n(void* p) { gxc_check_access(p, n, 0); }            \
  GXC_EMU_FN void __tsan_write##n(void* p) { gxc_check_access(p, n, 1); }           \
  GXC_EMU_FN void __tsan_unaligned_read##n(void* p) { gxc_check_access(p, n, 0); }  \
  GXC_EMU_FN void __tsan_unaligned_write##n(void* p) { gxc_check_access(p, n, 1); } \
  GXC_EMU_FN void __tsan_volatile_read##n(void* p) { gxc_check_access(p, n, 0); }   \
  GXC_EMU_FN void __tsan_volatile_write##n(void* p) { gxc_check_access(p, n, 1); }
GXC_CHECK_SIZE(1)
GXC_CHECK_SIZE(2)
GXC_CHECK_SIZE(4)
GXC_CHECK_SIZE(8)
GXC_CHECK_SIZE(16)
#undef GXC_CHECK_SIZE
GXC_EMU_FN void __tsan_read_range(void* p, unsigned long n) { gxc_check_access(p, n, 0); }
GXC_EMU_FN void __tsan_write_range(void* p, unsigned long n) { gxc_check_access(p, n, 1); }
}
