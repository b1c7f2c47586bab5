// Writes a TensorBoard event file of known scalars into DIR with gxc's TensorboardWriter, for
// tests/train/check_tensorboard.py, which reads it back with TensorBoard's own reader and
// knows the same values: three epochs of four steps each, with per-step `loss`, `lr` and
// `samples_per_second` (what `gxc train --tensorboard` writes), `val_loss` after each epoch,
// and one point at a step past 2^32 (steps are int64). The file is flushed after each epoch,
// as the training loop does, and the last records by the destructor.
//
// Usage: write_tensorboard_sample DIR. Prints the path of the file it wrote.
#include <cstdint>
#include <iostream>

#include "ir/diagnostic.h"
#include "tools/driver/error_handling.h"
#include "tools/driver/tensorboard_events.h"

namespace {

constexpr int kEpochs = 3;
constexpr int kStepsPerEpoch = 4;
constexpr double kFirstWallTime = 1700000000.0;

double wallTime(int64_t step) { return kFirstWallTime + 0.25 * static_cast<double>(step); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: write_tensorboard_sample DIR\n";
    return 2;
  }
  return gxc::reportErrors("write_tensorboard_sample", std::cerr, [&] {
    gxc::TensorboardWriter writer(argv[1]);
    int64_t step = 0;
    for (int epoch = 0; epoch < kEpochs; ++epoch) {
      for (int i = 0; i < kStepsPerEpoch; ++i, ++step) {
        // Values no float32 holds exactly, so that the check sees their float32 rounding.
        writer.addScalar("loss", 2.0 / static_cast<double>(step + 3), step, wallTime(step));
        writer.addScalar("lr", 0.01 / static_cast<double>(epoch + 1), step, wallTime(step));
        writer.addScalar("samples_per_second", 1000.0 + 37.1 * static_cast<double>(step), step,
                         wallTime(step));
      }
      writer.addScalar("val_loss", 1.0 / static_cast<double>(epoch + 7), step - 1,
                       wallTime(step - 1) + 0.125);
      writer.flush();
    }
    writer.addScalar("large_step", -0.5, int64_t{1} << 40, wallTime(step));
    std::cout << writer.path() << "\n";
    return 0;
  });
}
