// The cuDNN side of runtime/cuda/cuda_cudnn_conv.h: graph-API descriptors, engines chosen once
// per kind of convolution, the bias fill, and the calls. In a build without cuDNN the runner
// cannot be made (the executor asks builtWithCudnn() first), so the class links in every
// CUDA build.
#include "runtime/cuda/cuda_cudnn_conv.h"

#include "ir/diagnostic.h"

#if !GXC_HAVE_CUDNN
namespace gxc {

struct CudnnConvRunner::Impl {
  Stats stats;
};

CudnnConvRunner::CudnnConvRunner(int, CachingAllocator&, bool) {
  GXC_CHECK(false, "a cuDNN runner made in a build without cuDNN");
}
CudnnConvRunner::~CudnnConvRunner() = default;
bool CudnnConvRunner::run(const CudnnConv& conv, const void*, const void*, const void*, void*,
                          cudaStream_t) {
  GXC_CHECK(false, "layer '{}': cuDNN called in a build without cuDNN", conv.layer);
  return false;
}
const CudnnConvRunner::Stats& CudnnConvRunner::stats() const { return impl_->stats; }

}  // namespace gxc
#else

#include <cudnn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/cuda/cuda_check.h"

namespace gxc {
namespace {

// cuDNN's unique ids of the three tensors a call binds.
constexpr int64_t kXId = 1, kWId = 2, kYId = 3;

void checkCudnn(cudnnStatus_t status, const std::string& what) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  char detail[512] = "";
  cudnnGetLastErrorString(detail, sizeof(detail));
  throw CudaCallError(fmt::format("cuDNN error: {}{}{} ({})", cudnnGetErrorString(status),
                                  *detail ? ": " : "", detail, what));
}

// A backend descriptor, destroyed with its owner.
class Descriptor {
 public:
  Descriptor(cudnnBackendDescriptorType_t type, const std::string& what) {
    checkCudnn(cudnnBackendCreateDescriptor(type, &handle_), what);
  }
  ~Descriptor() {
    if (handle_) cudnnBackendDestroyDescriptor(handle_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  cudnnBackendDescriptor_t get() const { return handle_; }
  cudnnBackendDescriptor_t* address() { return &handle_; }

  template <typename T>
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
           const T* values, const std::string& what) {
    checkCudnn(cudnnBackendSetAttribute(handle_, name, type, count, values), what);
  }
  void setDescriptor(cudnnBackendAttributeName_t name, const Descriptor& value,
                     const std::string& what) {
    cudnnBackendDescriptor_t inner = value.get();
    set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &inner, what);
  }
  void finalize(const std::string& what) { checkCudnn(cudnnBackendFinalize(handle_), what); }

 private:
  cudnnBackendDescriptor_t handle_ = nullptr;
};

cudnnDataType_t cudnnType(DType dtype) {
  switch (dtype) {
    case DType::F16:
      return CUDNN_DATA_HALF;
    case DType::BF16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

int64_t elementBytes(DType dtype) { return dtype == DType::F32 ? 4 : 2; }

// The largest power of two, up to 16 (what cuDNN's vectorized engines ask), that divides the
// address: what the tensor descriptor may promise cuDNN.
int64_t alignmentOf(const void* address) {
  uint64_t bits = reinterpret_cast<uintptr_t>(address) | 16;
  return static_cast<int64_t>(bits & (~bits + 1));
}

std::unique_ptr<Descriptor> tensor(int64_t id, const std::array<int64_t, 4>& dims,
                                   const std::array<int64_t, 4>& strides, DType dtype,
                                   int64_t alignment, const std::string& what) {
  auto t = std::make_unique<Descriptor>(CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
  cudnnDataType_t type = cudnnType(dtype);
  t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, what);
  t->set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data(), what);
  t->set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data(), what);
  t->set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id, what);
  t->set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, what);
  t->finalize(what);
  return t;
}

// Whether an engine computes as the reference expects: no f16 accumulation, and for f32
// operands no TF32 tensor cores (nor inputs rounded down) unless allowed.
bool engineAcceptable(const Descriptor& config, DType dtype, bool allowTf32,
                      const std::string& what) {
  Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR, what);
  int64_t count = 0;
  cudnnBackendDescriptor_t inner = engine.get();
  checkCudnn(cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &inner),
             what);
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
  checkCudnn(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                      CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT,
                                      &count, notes.data()),
             what);
  for (int64_t i = 0; i < count; ++i) {
    if (notes[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION) return false;
    bool narrowsF32 = notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE ||
                      notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
    if (dtype == DType::F32 && narrowsF32 && !allowTf32) return false;
  }
  return true;
}

// One kind of convolution, planned once: its execution plan and workspace size (no plan:
// cuDNN had no engine for it).
struct Plan {
  std::unique_ptr<Descriptor> executionPlan;
  int64_t workspaceBytes = 0;
};

// What a plan depends on: the geometry's numbers, the dtype, and the three alignments.
using PlanKey = std::tuple<bool, DType, std::array<int64_t, 4>, std::array<int64_t, 4>,
                           std::array<int64_t, 4>, std::array<int64_t, 2>, std::array<int64_t, 2>,
                           std::array<int64_t, 2>, bool, int64_t, int64_t, int64_t>;

}  // namespace

struct CudnnConvRunner::Impl {
  int device = 0;
  CachingAllocator* allocator = nullptr;
  bool allowTf32 = false;
  cudnnHandle_t handle = nullptr;
  std::map<PlanKey, Plan> plans;
  std::map<cudaStream_t, CachingAllocator::Block> workspaces;
  Stats stats;

  const Plan& planFor(const CudnnConvGeometry& c, const std::array<int64_t, 3>& alignments,
                      bool beta, const std::string& what);
  void* workspaceFor(cudaStream_t stream, int64_t bytes, const std::string& what);
};

const Plan& CudnnConvRunner::Impl::planFor(const CudnnConvGeometry& c,
                                           const std::array<int64_t, 3>& alignments, bool beta,
                                           const std::string& what) {
  PlanKey key{c.backwardData, c.dtype,     c.x,  c.w,           c.y,           c.padding,
              c.strides,      c.dilations, beta, alignments[0], alignments[1], alignments[2]};
  if (auto found = plans.find(key); found != plans.end()) return found->second;
  ++stats.plans;
  Plan& plan = plans[key];
  auto x = tensor(kXId, c.x, c.xStrides, c.dtype, alignments[0], what);
  auto w = tensor(kWId, c.w, c.wStrides, c.dtype, alignments[1], what);
  auto y = tensor(kYId, c.y, c.yStrides, c.dtype, alignments[2], what);

  Descriptor convolution(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, what);
  int64_t spatialDims = 2;
  cudnnDataType_t computeType = CUDNN_DATA_FLOAT;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;  // PyTorch's convolution
  convolution.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatialDims, what);
  convolution.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &computeType, what);
  convolution.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, what);
  convolution.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, c.padding.data(), what);
  convolution.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, c.padding.data(),
                  what);
  convolution.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, c.strides.data(),
                  what);
  convolution.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, c.dilations.data(), what);
  convolution.finalize(what);

  // alpha = 1; beta = 1 where the result holds the bias already (the header's "Precision").
  float alpha = 1.0f, betaValue = beta ? 1.0f : 0.0f;
  Descriptor operation(c.backwardData ? CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR
                                      : CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                       what);
  if (c.backwardData) {
    operation.setDescriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, *x, what);
    operation.setDescriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, *w, what);
    operation.setDescriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, *y, what);
    operation.setDescriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, convolution, what);
    operation.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha,
                  what);
    operation.set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, 1, &betaValue,
                  what);
  } else {
    operation.setDescriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, *x, what);
    operation.setDescriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, *w, what);
    operation.setDescriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, *y, what);
    operation.setDescriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, convolution, what);
    operation.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha,
                  what);
    operation.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &betaValue,
                  what);
  }
  operation.finalize(what);

  // The handle attributes are marked deprecated in cuDNN 9 (a device-property descriptor is
  // their successor), but cuDNN 9 still takes them, and the plan runs on this handle anyway.
  Descriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, what);
  graph.setDescriptor(CUDNN_ATTR_OPERATIONGRAPH_OPS, operation, what);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, what);
  graph.finalize(what);

  // The heuristics' configurations in their order of preference, then cuDNN's fallback list;
  // the first acceptable one whose plan finalizes is kept. A configuration that does not
  // finalize (CUDNN_STATUS_NOT_SUPPORTED and kin) is an engine that does not fit, not an error.
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    Descriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, what);
    heuristics.setDescriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph, what);
    heuristics.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, what);
    if (cudnnBackendFinalize(heuristics.get()) != CUDNN_STATUS_SUCCESS) continue;
    int64_t count = 0;
    checkCudnn(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                        CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
               what);
    std::vector<std::unique_ptr<Descriptor> > configs;
    std::vector<cudnnBackendDescriptor_t> handles;
    for (int64_t i = 0; i < count; ++i) {
      configs.push_back(std::make_unique<Descriptor>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, what));
      handles.push_back(configs.back()->get());
    }
    checkCudnn(
        cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count, handles.data()),
        what);
    for (int64_t i = 0; i < count; ++i) {
      if (!engineAcceptable(*configs[i], c.dtype, allowTf32, what)) continue;
      auto executionPlan =
          std::make_unique<Descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, what);
      executionPlan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, what);
      executionPlan->setDescriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *configs[i], what);
      if (cudnnBackendFinalize(executionPlan->get()) != CUDNN_STATUS_SUCCESS) continue;
      int64_t elements = 0;
      checkCudnn(
          cudnnBackendGetAttribute(executionPlan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                   CUDNN_TYPE_INT64, 1, &elements, &plan.workspaceBytes),
          what);
      plan.executionPlan = std::move(executionPlan);
      return plan;
    }
  }
  return plan;  // no engine
}

void* CudnnConvRunner::Impl::workspaceFor(cudaStream_t stream, int64_t bytes,
                                          const std::string& what) {
  if (bytes == 0) return nullptr;
  CachingAllocator::Block& block = workspaces[stream];
  if (block.address && block.bytes >= bytes) return block.address;
  if (block.address) {
    // The stream's earlier convolutions may still use the smaller block: wait for them before
    // it goes back to the allocator, which may hand its bytes to another stream.
    checkCuda(cudaStreamSynchronize(stream), "growing the cuDNN workspace of " + what);
    allocator->free(block);
    block = {};
  }
  block = allocator->allocate(bytes, "cuDNN's workspace for " + what);
  return block.address;
}

CudnnConvRunner::CudnnConvRunner(int cudaDevice, CachingAllocator& allocator, bool allowTf32)
    : impl_(std::make_unique<Impl>()) {
  impl_->device = cudaDevice;
  impl_->allocator = &allocator;
  impl_->allowTf32 = allowTf32;
  CudaDeviceGuard guard(cudaDevice);
  checkCudnn(cudnnCreate(&impl_->handle), fmt::format("cudnnCreate on GPU {}", cudaDevice));
}

CudnnConvRunner::~CudnnConvRunner() {
  CudaDeviceGuard guard(impl_->device, /*quiet=*/true);
  for (auto& [stream, block] : impl_->workspaces) {
    cudaStreamSynchronize(stream);
    if (block.address) impl_->allocator->free(block);
  }
  cudaGetLastError();
  impl_->plans.clear();
  if (impl_->handle) cudnnDestroy(impl_->handle);
}

const CudnnConvRunner::Stats& CudnnConvRunner::stats() const { return impl_->stats; }

bool CudnnConvRunner::run(const CudnnConv& conv, const void* x, const void* w, const void* bias,
                          void* out, cudaStream_t stream) {
  const CudnnConvGeometry& c = conv.geometry;
  std::string what = fmt::format("layer '{}' on GPU {}", conv.layer, impl_->device);
  GXC_CHECK(c.viaCudnn(), "{}: cuDNN given a convolution it does not take ({})", what,
            *c.generatedBecause);
  // cuDNN's x is the op's result for a transposed convolution (backward data), its y the input.
  const void* cudnnX = c.backwardData ? out : x;
  const void* cudnnY = c.backwardData ? x : out;
  std::array<int64_t, 3> alignments{alignmentOf(cudnnX), alignmentOf(w), alignmentOf(cudnnY)};
  const std::array<int64_t, 4>& dims = c.backwardData ? c.x : c.y;  // the op's result
  if (dims[0] * dims[1] * dims[2] * dims[3] == 0) return true;
  const Plan& plan = impl_->planFor(c, alignments, c.bias, what);
  if (!plan.executionPlan) {
    ++impl_->stats.noEngine;
    return false;
  }
  void* workspace = impl_->workspaceFor(stream, plan.workspaceBytes, what);
  if (c.bias) {
    // Each channel's bias into its first element of every (image, channel) plane, across the
    // first image's planes (one 2-D copy: a row per channel), then doubled along each plane,
    // then the first image copied into the others, doubling too.
    size_t element = static_cast<size_t>(elementBytes(c.dtype));
    size_t plane = static_cast<size_t>(dims[2] * dims[3]);
    size_t channels = static_cast<size_t>(dims[1]);
    auto* bytes = static_cast<std::byte*>(out);
    std::string fill = "filling the bias of " + what;
    checkCuda(cudaMemcpy2DAsync(bytes, plane * element, bias, element, element, channels,
                                cudaMemcpyDeviceToDevice, stream),
              fill);
    for (size_t filled = 1; filled < plane; filled *= 2) {
      size_t count = std::min(filled, plane - filled);
      checkCuda(cudaMemcpy2DAsync(bytes + filled * element, plane * element, bytes, plane * element,
                                  count * element, channels, cudaMemcpyDeviceToDevice, stream),
                fill);
    }
    size_t image = channels * plane * element;
    size_t images = static_cast<size_t>(dims[0]);
    for (size_t filled = 1; filled < images; filled *= 2) {
      size_t count = std::min(filled, images - filled);
      checkCuda(cudaMemcpyAsync(bytes + filled * image, bytes, count * image,
                                cudaMemcpyDeviceToDevice, stream),
                fill);
    }
  }
  checkCudnn(cudnnSetStream(impl_->handle, stream), what);
  std::array<void*, 3> pointers{const_cast<void*>(cudnnX), const_cast<void*>(w),
                                const_cast<void*>(cudnnY)};
  std::array<int64_t, 3> ids{kXId, kWId, kYId};
  Descriptor variants(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, what);
  variants.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers.data(),
               what);
  variants.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, ids.data(), what);
  variants.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, what);
  variants.finalize(what);
  checkCudnn(cudnnBackendExecute(impl_->handle, plan.executionPlan->get(), variants.get()), what);
  ++impl_->stats.calls;
  return true;
}

}  // namespace gxc

#endif  // GXC_HAVE_CUDNN
