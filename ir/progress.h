// Progress of long work (params initialized or read, kernels built, iterations, a long host
// run), reported by whatever layer does the work to whatever the driver installed.
//
// It lives at the bottom of the layers, beside diagnostic.h, so runtime, codegen and tensor
// code can report without knowing who listens: `gxc` installs a terminal renderer
// (tools/driver/terminal_progress.h) that draws only when stderr is a terminal; libraries and
// tests install nothing, and a task then costs one atomic load. Tasks may overlap (a param
// initialized during the host run): the sink shows the latest one still under way.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace gxc {

enum class ProgressUnit { Count, Bytes };

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // A task begins: what it is and how much there is of it (0: unknown, shown as time spent).
  // Returns the id the other calls name it by. May be called from any thread.
  virtual int begin(const std::string& label, int64_t total, ProgressUnit unit) = 0;
  // `done` of its total is done now (never less than before).
  virtual void update(int task, int64_t done) = 0;
  // The task is over, finished or failed: nothing of it stays on the screen.
  virtual void end(int task) = 0;
  // What the task reports besides how far it is ("loss 0.31, 5900 samples/s"), replacing
  // what it said before. Sinks that show no such thing need not override it.
  virtual void describe(int /*task*/, const std::string& /*status*/) {}
  // A line that stays, printed where progress is shown (an estimate before long work).
  virtual void announce(const std::string& line) = 0;
};

// The sink of this process, or null when none is installed.
ProgressSink* progressSink();

// Installs `sink` for the lifetime of this object; the one before comes back after.
class ScopedProgressSink {
 public:
  explicit ScopedProgressSink(ProgressSink* sink);
  ~ScopedProgressSink();
  ScopedProgressSink(const ScopedProgressSink&) = delete;
  ScopedProgressSink& operator=(const ScopedProgressSink&) = delete;

 private:
  ProgressSink* previous_;
};

// Prints `line` through the installed sink, if any (nothing otherwise).
void announceProgress(const std::string& line);

// One task, reported to the sink installed when it begins (if any) until it is destroyed,
// so an error thrown through it ends it too.
class ProgressTask {
 public:
  ProgressTask(const std::string& label, int64_t total, ProgressUnit unit = ProgressUnit::Count);
  ~ProgressTask();
  ProgressTask(const ProgressTask&) = delete;
  ProgressTask& operator=(const ProgressTask&) = delete;

  // `amount` more is done. Safe from several threads at once.
  void advance(int64_t amount = 1);
  // What it reports besides how far it is (ProgressSink::describe).
  void describe(const std::string& status);

 private:
  ProgressSink* sink_;
  int id_ = -1;
  std::atomic<int64_t> done_{0};
};

}  // namespace gxc
