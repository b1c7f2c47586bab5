#include "ir/progress.h"

namespace gxc {
namespace {

std::atomic<ProgressSink*> installedSink{nullptr};

}  // namespace

ProgressSink* progressSink() { return installedSink.load(std::memory_order_acquire); }

ScopedProgressSink::ScopedProgressSink(ProgressSink* sink)
    : previous_(installedSink.exchange(sink, std::memory_order_acq_rel)) {}

ScopedProgressSink::~ScopedProgressSink() {
  installedSink.store(previous_, std::memory_order_release);
}

void announceProgress(const std::string& line) {
  if (ProgressSink* sink = progressSink()) sink->announce(line);
}

ProgressTask::ProgressTask(const std::string& label, int64_t total, ProgressUnit unit)
    : sink_(progressSink()) {
  if (sink_) id_ = sink_->begin(label, total, unit);
}

ProgressTask::~ProgressTask() {
  if (sink_) sink_->end(id_);
}

void ProgressTask::describe(const std::string& status) {
  if (sink_) sink_->describe(id_, status);
}

void ProgressTask::advance(int64_t amount) {
  int64_t done = done_.fetch_add(amount, std::memory_order_relaxed) + amount;
  if (sink_) sink_->update(id_, done);
}

}  // namespace gxc
