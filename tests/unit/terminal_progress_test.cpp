// Tests of progress on a terminal (tools/driver/terminal_progress.h) with a fake clock and a
// string for stderr, of the tasks that report to it (ir/progress.h), and of the estimate a
// long host run is announced with (tools/driver/host_estimate.h).
#include "tools/driver/terminal_progress.h"

#include <atomic>
#include <chrono>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "frontend/model_loader.h"
#include "ir/progress.h"
#include "tools/driver/host_estimate.h"

namespace gxc {
namespace {

constexpr const char* kClear = "\r\x1b[K";

class TerminalProgressTest : public ::testing::Test {
 protected:
  TerminalProgress::Clock clock() {
    return [this] { return now_; };
  }
  std::string drawn() {  // what was written since the last call
    std::string text = err_.str();
    err_.str("");
    return text;
  }

  double now_ = 100;
  std::ostringstream err_;
};

TEST_F(TerminalProgressTest, DrawsTasksThatLastAndClearsThemWhenTheyEnd) {
  TerminalProgress progress(err_, true, 80, clock());
  int task = progress.begin("initializing param 'W1'", int64_t{8} << 30, ProgressUnit::Bytes);
  now_ += 0.2;
  progress.update(task, int64_t{1} << 30);
  EXPECT_EQ(drawn(), "") << "work shorter than half a second shows nothing";
  now_ += 0.5;
  progress.update(task, int64_t{2} << 30);
  EXPECT_EQ(drawn(), "\rgxc: initializing param 'W1': 2.0 GiB of 8.0 GiB (25%), 0 s\x1b[K");
  now_ += 0.05;
  progress.update(task, int64_t{3} << 30);
  EXPECT_EQ(drawn(), "") << "at most ten redraws a second";
  now_ += 1.0;
  progress.tick();  // no update, but time goes on
  EXPECT_EQ(drawn(), "\rgxc: initializing param 'W1': 3.0 GiB of 8.0 GiB (37%), 1 s\x1b[K");
  progress.end(task);
  EXPECT_EQ(drawn(), kClear);
}

TEST_F(TerminalProgressTest, ShowsTheLatestTaskAndCountsAndTimeAlone) {
  TerminalProgress progress(err_, true, 80, clock());
  int run = progress.begin("running on the host", 0, ProgressUnit::Count);
  now_ += 75;
  progress.tick();
  EXPECT_EQ(drawn(), "\rgxc: running on the host, 1 min 15 s\x1b[K");
  int iterations = progress.begin("timed iterations", 10, ProgressUnit::Count);
  now_ += 0.6;
  progress.update(iterations, 3);
  EXPECT_EQ(drawn(), "\rgxc: timed iterations: 3 of 10, 0 s\x1b[K");
  progress.end(iterations);
  EXPECT_EQ(drawn(), kClear);
  progress.tick();
  EXPECT_EQ(drawn(), "\rgxc: running on the host, 1 min 15 s\x1b[K");
  progress.end(run);
  EXPECT_EQ(drawn(), kClear);
}

// gxc train's epochs: the loss and the rate of the last step beside the count.
TEST_F(TerminalProgressTest, ShowsWhatATaskReportsBesideItsCount) {
  TerminalProgress progress(err_, true, 80, clock());
  int epoch = progress.begin("epoch 1/3", 8, ProgressUnit::Count);
  now_ += 0.6;
  progress.update(epoch, 2);
  EXPECT_EQ(drawn(), "\rgxc: epoch 1/3: 2 of 8, 0 s\x1b[K");
  now_ += 0.2;
  progress.describe(epoch, "loss 0.3125, 5900 samples/s");
  EXPECT_EQ(drawn(), "\rgxc: epoch 1/3: 2 of 8, loss 0.3125, 5900 samples/s, 0 s\x1b[K");
  now_ += 0.2;
  progress.update(epoch, 3);
  EXPECT_EQ(drawn(), "\rgxc: epoch 1/3: 3 of 8, loss 0.3125, 5900 samples/s, 1 s\x1b[K")
      << "the status stays until the task says another";
  progress.end(epoch);
}

TEST_F(TerminalProgressTest, AnnouncedLinesStayAboveTheProgressLine) {
  TerminalProgress progress(err_, true, 80, clock());
  int task = progress.begin("running on the host", 0, ProgressUnit::Count);
  now_ += 1;
  progress.tick();
  drawn();
  progress.announce("gxc: about 9 min on the host (80 TFLOP)");
  EXPECT_EQ(drawn(), std::string(kClear) +
                         "gxc: about 9 min on the host (80 TFLOP)\n"
                         "\rgxc: running on the host, 1 s\x1b[K");
  progress.end(task);
}

TEST_F(TerminalProgressTest, CutsLinesToTheTerminalWidth) {
  TerminalProgress progress(err_, true, 30, clock());
  int task = progress.begin("compiling 12 generated kernels for the host", 0, ProgressUnit::Count);
  now_ += 1;
  progress.tick();
  EXPECT_EQ(drawn(), "\rgxc: compiling 12 generated k\x1b[K");
  progress.end(task);
}

TEST_F(TerminalProgressTest, WritesNothingWhenStderrIsNotATerminal) {
  {
    TerminalProgress progress(err_, false, 80, clock());
    int task = progress.begin("initializing param 'W1'", 100, ProgressUnit::Bytes);
    now_ += 10;
    progress.update(task, 50);
    progress.tick();
    progress.announce("gxc: about 9 min on the host (80 TFLOP)");
    progress.end(task);
  }
  EXPECT_EQ(err_.str(), "");
}

TEST_F(TerminalProgressTest, TasksReportToTheInstalledSinkOnly) {
  TerminalProgress progress(err_, true, 80, clock());
  {
    ProgressTask unseen("before the sink", 4);  // nothing installed: reports nowhere
    unseen.advance();
  }
  ScopedProgressSink installed(&progress);
  {
    ProgressTask task("timed iterations", 4);
    task.advance();
    task.advance();
    now_ += 1;
    progress.tick();
    EXPECT_EQ(drawn(), "\rgxc: timed iterations: 2 of 4, 1 s\x1b[K");
  }
  EXPECT_EQ(drawn(), kClear) << "a task ends with its scope";
}

// The redraw thread keeps the time of a task that gets no updates (a compiler running) going,
// and stops with the renderer. Run under ThreadSanitizer too (scripts/test.sh).
TEST(TerminalProgressThreadTest, RedrawsWhileNothingElseDoes) {
  std::ostringstream err;
  std::atomic<int> clockReads{0};
  std::atomic<double> now{100};
  {
    TerminalProgress progress(err, true, 80, [&] {
      ++clockReads;
      return now.load();
    });
    int task = progress.begin("compiling 3 generated kernels for the host", 0, ProgressUnit::Count);
    now = 102;
    progress.startRedrawThread();
    // Two reads of the clock after this one: the redraw thread has drawn at least once.
    int seen = clockReads.load();
    for (int i = 0; i < 500 && clockReads.load() < seen + 2; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    progress.end(task);
  }
  EXPECT_EQ(err.str(),
            "\rgxc: compiling 3 generated kernels for the host, 2 s\x1b[K" + std::string(kClear));
}

TEST(ProgressTextTest, FormatsDurationsAndAmounts) {
  EXPECT_EQ(formatDuration(0.4), "0 s");
  EXPECT_EQ(formatDuration(59.9), "59 s");
  EXPECT_EQ(formatDuration(61), "1 min 1 s");
  EXPECT_EQ(formatDuration(7500), "2 h 5 min");
  EXPECT_EQ(progressLineText("reading 'w'", 512, 1024, ProgressUnit::Bytes, 3),
            "reading 'w': 512 B of 1.0 KiB (50%), 3 s");
  EXPECT_EQ(progressLineText("timed iterations", 12, 10, ProgressUnit::Count, 3),
            "timed iterations: 10 of 10, 3 s");
}

// The cost model's host figures (target/cost_model.cpp): GEMMs at 1 TFLOP/s, other ops at
// 100 GB/s of memory traffic.
TEST(HostEstimateTest, AnnouncesOnlyRunsLongerThanAFewSeconds) {
  auto small = loadModel(std::string(GXC_SOURCE_DIR) + "/models/mlp.yaml");
  HostRunEstimate mlp = estimateHostRun(*small);
  EXPECT_LT(mlp.seconds, 1e-3);
  EXPECT_EQ(hostRunAnnouncement(mlp), std::nullopt);

  // The full-size VeryBigModule: two GEMMs of 2 * 1e5 * 2e4 * 64 flops each.
  auto big = loadModel(std::string(GXC_SOURCE_DIR) + "/models/very_big_module.yaml");
  HostRunEstimate vbm = estimateHostRun(*big);
  EXPECT_DOUBLE_EQ(vbm.flops, 2 * 2 * 1e5 * 2e4 * 64);

  EXPECT_EQ(hostRunAnnouncement({540, 80e12}), "about 9 min on the host (80 TFLOP)");
  EXPECT_EQ(hostRunAnnouncement({40, 2.5e12}), "about 40 s on the host (2.5 TFLOP)");
  EXPECT_EQ(hostRunAnnouncement({9000, 120e9}), "about 2.5 h on the host (120 GFLOP)");
  EXPECT_EQ(hostRunAnnouncement({6, 0}), "about 6 s on the host");
  EXPECT_EQ(hostRunAnnouncement({kAnnounceHostRunSeconds, 1e12}), std::nullopt);
}

}  // namespace
}  // namespace gxc
