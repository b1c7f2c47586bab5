// resnet_cifar's 3x3 convolutions in oneDNN, then ResNet-18's at a 64x64 image (the ONNX
// export of bench/onnx_networks_vs_ort.py), one per activation layout: which kernel oneDNN
// picks for each, what a call costs, and what the reorders from and to NCHW (gxc's layout
// between ops) cost around it. docs/performance.md cites it where it says why gxc's host
// convolutions take the layout oneDNN prefers.
//
//   conv_layouts_bench [BATCH] [CALLS]   (default 8 and 200; set OMP_NUM_THREADS)
//
// Prints, per shape and layout: oneDNN's implementation, the median microseconds of a call,
// and of the two reorders. A layout that only oneDNN's reference implementation serves is
// named and skipped (it runs hundreds of times slower).
#include <dnnl.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/median_micros.h"

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

using gxc::bench::medianMicros;

struct Shape {
  int channels, size;  // in = out channels; square images
};

const char* tagName(Tag tag) {
  switch (tag) {
    case Tag::any:
      return "oneDNN's pick";
    case Tag::nChw16c:
      return "nChw16c";
    case Tag::nChw8c:
      return "nChw8c";
    default:
      return "nhwc";
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int batch = argc > 1 ? std::max(1, std::atoi(argv[1])) : 8;
  const int calls = argc > 2 ? std::max(1, std::atoi(argv[2])) : 200;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const auto f32 = memory::data_type::f32;
  for (Shape shape : {Shape{8, 32}, Shape{16, 16}, Shape{32, 8}, Shape{64, 4}, Shape{64, 16},
                      Shape{128, 8}, Shape{256, 4}, Shape{512, 2}}) {
    const memory::dims images{batch, shape.channels, shape.size, shape.size};
    const memory::dims weights{shape.channels, shape.channels, 3, 3};
    for (Tag tag : {Tag::any, Tag::nChw16c, Tag::nChw8c, Tag::nhwc}) {
      const memory::desc src(images, f32, tag), dst(images, f32, tag);
      const memory::desc wei(weights, f32, Tag::any);
      const dnnl::convolution_forward::primitive_desc made(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                          dnnl::algorithm::convolution_direct, src, wei, dst,
                                          {1, 1}, {1, 1}, {1, 1}),
          engine);
      const std::string impl = made.impl_info_str();
      std::printf("batch %d, %2d channels, %2dx%-2d, %-13s %-22s", batch, shape.channels,
                  shape.size, shape.size, tagName(tag), impl.c_str());
      if (impl.rfind("ref", 0) == 0) {
        std::printf(" reference only, skipped\n");
        continue;
      }
      memory srcMem(made.src_desc(), engine), weiMem(made.weights_desc(), engine),
          dstMem(made.dst_desc(), engine);
      memory plainSrc({images, f32, Tag::nchw}, engine), plainDst({images, f32, Tag::nchw}, engine);
      for (memory* filled : {&srcMem, &weiMem, &plainSrc}) {
        float* data = static_cast<float*>(filled->get_data_handle());
        std::fill(data, data + filled->get_desc().get_size() / sizeof(float), 0.25f);
      }
      dnnl::convolution_forward conv(made);
      dnnl::reorder toBlocked(plainSrc, srcMem), toPlain(dstMem, plainDst);
      double convMicros = medianMicros(calls, [&] {
        conv.execute(stream,
                     {{DNNL_ARG_SRC, srcMem}, {DNNL_ARG_WEIGHTS, weiMem}, {DNNL_ARG_DST, dstMem}});
        stream.wait();
      });
      double reorderMicros = medianMicros(calls, [&] {
        toBlocked.execute(stream, plainSrc, srcMem);
        toPlain.execute(stream, dstMem, plainDst);
        stream.wait();
      });
      std::printf(" conv %8.1f us, reorders in and out %6.1f us\n", convMicros, reorderMicros);
    }
  }
  return 0;
}
