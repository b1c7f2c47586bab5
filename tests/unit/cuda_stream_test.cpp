// Streams, events and pinned staging on a real GPU (runtime/cuda/cuda_stream.h, cuda_staging.h).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "cuda_test_helpers.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_staging.h"
#include "runtime/cuda/cuda_stream.h"

namespace gxc {
namespace {

std::shared_ptr<Tensor> counting(int64_t count) {
  auto tensor = std::make_shared<Tensor>(DType::F32, Shape{count});
  for (int64_t i = 0; i < count; ++i) tensor->as<float>()[i] = static_cast<float>(i % 1000003);
  return tensor;
}

TEST(CudaStreamTest, AnEventOrdersAConsumerStreamAfterAProducerStream) {
  GXC_REQUIRE_GPUS(1);
  // 48 MiB through a 4 MiB staging buffer: twelve chunks on the producer stream, so the
  // consumer would read a half-written buffer if the event did not hold it back.
  constexpr int64_t kCount = int64_t{12} << 20;
  CudaStream producer(0, "cuda:0.h2d"), consumer(0, "cuda:0.d2h");
  CudaStagingBuffer up(4 << 20), down(4 << 20);
  void* device = nullptr;
  checkCuda(cudaMalloc(&device, kCount * 4), "test buffer");
  auto source = counting(kCount);
  auto result = std::make_shared<Tensor>(DType::F32, Shape{kCount});
  CudaEvent uploaded(0);
  up.toDevice(producer, source, device);
  uploaded.record(producer);
  uploaded.waitOn(consumer);
  down.toHost(consumer, device, result);
  consumer.synchronize();
  EXPECT_TRUE(uploaded.done());
  EXPECT_EQ(std::memcmp(result->data(), source->data(), source->nbytes()), 0);
  EXPECT_EQ(up.pinnedAllocations(), 1);  // one pinning for all twelve chunks
  EXPECT_EQ(down.pinnedAllocations(), 1);
  cudaFree(device);
}

TEST(CudaStreamTest, TimingEventsMeasureWhatIsBetweenThem) {
  GXC_REQUIRE_GPUS(1);
  CudaStream stream(0, "cuda:0.compute");
  CudaEvent start(0, /*timing=*/true), end(0, /*timing=*/true);
  void* device = nullptr;
  checkCuda(cudaMalloc(&device, 256 << 20), "test buffer");
  start.record(stream);
  for (int i = 0; i < 8; ++i)
    checkCuda(cudaMemsetAsync(device, i, 256 << 20, stream.get()), "memset");
  end.record(stream);
  end.synchronize();
  EXPECT_GT(end.millisecondsSince(start), 0.0f);
  cudaFree(device);
}

// A pooled event comes back rather than a new one being made, per GPU.
TEST(CudaStreamTest, ThePoolReusesEventsGivenBack) {
  GXC_REQUIRE_GPUS(1);
  CudaEventPool pool;
  CudaStream stream(0, "cuda:0.compute");
  std::unique_ptr<CudaEvent> first = pool.take(0);
  cudaEvent_t handle = first->get();
  first->record(stream);
  first->synchronize();
  pool.giveBack(std::move(first));
  std::unique_ptr<CudaEvent> again = pool.take(0);
  EXPECT_EQ(again->get(), handle);
  std::unique_ptr<CudaEvent> second = pool.take(0);  // the first is still taken
  EXPECT_NE(second->get(), handle);
  EXPECT_EQ(pool.created(), 2);
  again->record(stream);  // a reused event records anew
  again->synchronize();
  EXPECT_TRUE(again->done());
}

}  // namespace
}  // namespace gxc
