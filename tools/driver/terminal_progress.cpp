#include "tools/driver/terminal_progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "target/byte_size.h"

namespace gxc {
namespace {

constexpr const char* kClearToEnd = "\x1b[K";

double steadySeconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string formatDuration(double seconds) {
  auto whole = static_cast<int64_t>(std::max(0.0, seconds));
  if (whole < 60) return fmt::format("{} s", whole);
  if (whole < 3600) return fmt::format("{} min {} s", whole / 60, whole % 60);
  return fmt::format("{} h {} min", whole / 3600, whole % 3600 / 60);
}

std::string progressLineText(const std::string& label, int64_t done, int64_t total,
                             ProgressUnit unit, double seconds, const std::string& status) {
  std::string elapsed = status.empty() ? formatDuration(seconds)
                                       : fmt::format("{}, {}", status, formatDuration(seconds));
  if (total <= 0) return fmt::format("{}, {}", label, elapsed);
  done = std::clamp<int64_t>(done, 0, total);
  if (unit == ProgressUnit::Count)
    return fmt::format("{}: {} of {}, {}", label, done, total, elapsed);
  auto percent = static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
  return fmt::format("{}: {} of {} ({}%), {}", label, formatBytes(done), formatBytes(total),
                     percent, elapsed);
}

bool stderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

int stderrColumns() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

TerminalProgress::TerminalProgress(std::ostream& err, bool isTerminal, int width, Clock clock)
    : err_(err),
      isTerminal_(isTerminal),
      width_(std::max(width, 20)),
      clock_(clock ? std::move(clock) : Clock(steadySeconds)) {}

TerminalProgress::~TerminalProgress() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (redraw_.joinable()) redraw_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  clearLocked();
}

void TerminalProgress::startRedrawThread() {
  if (!isTerminal_ || redraw_.joinable()) return;
  redraw_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    auto period = std::chrono::duration<double>(kRedrawEverySeconds);
    while (!stop_.wait_for(lock, period, [this] { return stopping_; })) drawLocked(clock_(), false);
  });
}

void TerminalProgress::tick() {
  std::lock_guard<std::mutex> lock(mutex_);
  drawLocked(clock_(), false);
}

void TerminalProgress::announce(const std::string& line) {
  if (!isTerminal_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  clearLocked();
  err_ << line << "\n";
  err_.flush();
  drawLocked(clock_(), true);
}

int TerminalProgress::begin(const std::string& label, int64_t total, ProgressUnit unit) {
  std::lock_guard<std::mutex> lock(mutex_);
  int id = nextId_++;
  if (isTerminal_) tasks_.push_back({id, label, total, unit, 0, clock_(), {}});
  return id;
}

void TerminalProgress::update(int task, int64_t done) {
  if (!isTerminal_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (Task& entry : tasks_)
    if (entry.id == task) entry.done = std::max(entry.done, done);
  drawLocked(clock_(), false);
}

void TerminalProgress::end(int task) {
  if (!isTerminal_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  std::erase_if(tasks_, [&](const Task& entry) { return entry.id == task; });
  // The line goes with its task; a task still under way is drawn again at the next tick.
  clearLocked();
}

void TerminalProgress::describe(int task, const std::string& status) {
  if (!isTerminal_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (Task& entry : tasks_)
    if (entry.id == task) entry.status = status;
  drawLocked(clock_(), false);
}

void TerminalProgress::drawLocked(double now, bool force) {
  if (!isTerminal_) return;
  if (!force && lastDraw_ >= 0 && now - lastDraw_ < kRedrawEverySeconds) return;
  // The latest task that has lasted long enough to be worth a line.
  const Task* shown = nullptr;
  for (auto task = tasks_.rbegin(); task != tasks_.rend() && !shown; ++task)
    if (now - task->started >= kShowAfterSeconds) shown = &*task;
  if (!shown) return;
  std::string text = "gxc: " + progressLineText(shown->label, shown->done, shown->total,
                                                shown->unit, now - shown->started, shown->status);
  if (static_cast<int>(text.size()) >= width_) text.resize(static_cast<size_t>(width_ - 1));
  err_ << "\r" << text << kClearToEnd;
  err_.flush();
  lineShown_ = true;
  lastDraw_ = now;
}

void TerminalProgress::clearLocked() {
  if (!lineShown_) return;
  err_ << "\r" << kClearToEnd;
  err_.flush();
  lineShown_ = false;
  lastDraw_ = -1;
}

}  // namespace gxc
