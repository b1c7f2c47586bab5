// Progress on a terminal: the ProgressSink (ir/progress.h) that `gxc` installs.
//
// One line at the bottom of stderr, redrawn in place: the latest task still under way, how
// far it is ("3.2 GiB of 8.0 GiB (40%)", "3 of 10") and how long it has run. Only work that
// lasts more than half a second shows; the line is redrawn at most ten times a second, also
// while no update comes (a compiler running, the host computing one big GEMM), and cleared
// when the task ends, so what is printed after it starts on a clean line. When stderr is not
// a terminal (a pipe, a file, CI) nothing at all is written.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "ir/progress.h"

namespace gxc {

class TerminalProgress : public ProgressSink {
 public:
  using Clock = std::function<double()>;  // seconds, monotone

  static constexpr double kShowAfterSeconds = 0.5;
  static constexpr double kRedrawEverySeconds = 0.1;

  // Writes to `err` only when `isTerminal`; lines are cut to `width` columns so that a
  // redraw never wraps. `clock` is injectable for tests.
  TerminalProgress(std::ostream& err, bool isTerminal, int width = 80, Clock clock = nullptr);
  ~TerminalProgress() override;  // clears the line and stops the redraw thread
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  bool isTerminal() const { return isTerminal_; }

  // A thread that redraws while nothing else does, so time spent keeps counting.
  void startRedrawThread();
  // Redraws the line if it is due; what the redraw thread calls (and tests).
  void tick();
  // A line that stays (above the progress line), on a terminal only.
  void announce(const std::string& line) override;

  int begin(const std::string& label, int64_t total, ProgressUnit unit) override;
  void update(int task, int64_t done) override;
  void end(int task) override;
  void describe(int task, const std::string& status) override;

 private:
  struct Task {
    int id;
    std::string label;
    int64_t total;
    ProgressUnit unit;
    int64_t done = 0;
    double started;
    std::string status;
  };

  void drawLocked(double now, bool force);
  void clearLocked();

  std::ostream& err_;
  bool isTerminal_;
  int width_;
  Clock clock_;
  std::mutex mutex_;
  std::vector<Task> tasks_;  // under way, in the order they began
  int nextId_ = 0;
  bool lineShown_ = false;
  double lastDraw_ = -1;
  std::thread redraw_;
  std::condition_variable stop_;
  bool stopping_ = false;
};

// The text of the progress line of `task`-like figures, without the "gxc: " prefix:
// "LABEL: 3.2 GiB of 8.0 GiB (40%), 12 s", "LABEL: 3 of 10, 12 s", "LABEL, 12 s"; a status
// goes before the time: "LABEL: 3 of 10, loss 0.31, 12 s".
std::string progressLineText(const std::string& label, int64_t done, int64_t total,
                             ProgressUnit unit, double seconds, const std::string& status = "");

// "12 s", "1 min 12 s", "2 h 5 min".
std::string formatDuration(double seconds);

// Whether stderr is a terminal (isatty), and its width in columns (80 when unknown).
bool stderrIsTerminal();
int stderrColumns();

}  // namespace gxc
