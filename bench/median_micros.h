// The median time of a call, for the benches that time one library call at a time
// (conv_layouts_bench, attention_layouts_bench).
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace gxc::bench {

// The median microseconds of `calls` calls of `call`, after one more as a warm-up (first
// touch of the buffers, oneDNN's JIT).
inline double medianMicros(int calls, const std::function<void()>& call) {
  call();
  std::vector<double> micros;
  for (int i = 0; i < calls; ++i) {
    auto start = std::chrono::steady_clock::now();
    call();
    micros.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(micros.begin(), micros.end());
  return micros[micros.size() / 2];
}

}  // namespace gxc::bench
