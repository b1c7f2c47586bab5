#include "passes/replicate_update.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "ir/fused_kernel.h"
#include "ir/infer_type.h"

namespace gxc {
namespace {

std::string suffixOf(const Device& device) {
  std::string suffix = device.str();
  suffix.erase(std::remove(suffix.begin(), suffix.end(), ':'), suffix.end());
  return suffix;
}

// Gradients sent together: one dtype, from one device, in the order the backward sums them.
struct Bucket {
  std::vector<Value*> values;
  int64_t bytes = 0;
};

class Replicator {
 public:
  Replicator(Graph& graph, const PassContext& context)
      : graph_(graph), context_(context), front_(context.target.devices.front().device) {}

  bool run() {
    if (graph_.attrs().getInt("data_parallel", 0) < 2) return false;
    for (Op* op : graph_.ops())
      if (op->kind != OpKind::Param && !op->device().placed()) update_.push_back(op);
    if (update_.empty()) return false;
    collectOperands();
    std::vector<Device> devices = replicaDevices();
    for (const Device& device : devices) replicateParams(device);
    // (A batch too small to reach every device may leave no other device to send to.)
    std::vector<Bucket> buckets = devices.empty() ? std::vector<Bucket>{} : cutBuckets();
    for (size_t i = 0; i < buckets.size(); ++i) send(buckets[i], i, devices);
    for (Op* op : update_) op->result->type.device = front_;
    for (const Device& device : devices) cloneUpdate(device);
    return true;
  }

 private:
  // What the update reads from outside itself: params, and values of the backward (the
  // summed gradients), the latter in the order the backward computes them.
  void collectOperands() {
    std::set<const Op*> inUpdate(update_.begin(), update_.end());
    std::set<const Value*> seen;
    for (const Op* op : update_) {
      if (op->kind == OpKind::Assign) assigned_.insert(op->operands[0]);
      for (Value* operand : op->operands) {
        if (!seen.insert(operand).second ||
            (operand->producer && inUpdate.count(operand->producer)))
          continue;
        if (operand->producer && operand->producer->kind == OpKind::Param)
          params_.push_back(operand);
        else
          reduced_.push_back(operand);
      }
    }
    std::sort(reduced_.begin(), reduced_.end(),
              [&](const Value* a, const Value* b) { return positionOf(a) < positionOf(b); });
  }

  size_t positionOf(const Value* value) const {
    return value->producer ? graph_.opIndex(value->producer) + 1 : 0;
  }

  // The devices other than the first whose shards read a param the update writes.
  std::vector<Device> replicaDevices() const {
    std::set<std::pair<int, int>> keys;
    std::vector<Device> devices;
    for (const Op* op : graph_.ops()) {
      if (!op->device().placed() || op->device() == front_) continue;
      for (const Value* operand : op->operands)
        if (assigned_.count(operand) &&
            keys.insert({static_cast<int>(op->device().kind), op->device().index}).second) {
          devices.push_back(op->device());
          break;
        }
    }
    return devices;
  }

  // The device's own copy of each param the update reads (the same `name`: loaded and
  // initialized as the original), and its shards read it.
  void replicateParams(const Device& device) {
    Op* first = graph_.ops().front();
    std::map<Value*, Value*>& replicas = replicas_[device.str()];
    for (Value* param : params_) {
      TensorType type = param->type;
      type.device = device;
      Op* original = param->producer;
      replicas[param] = graph_
                            .insertOpBefore(first, OpKind::Param, {},
                                            graph_.uniqueName(param->name + "." + suffixOf(device)),
                                            type, original->attrs, original->loc)
                            ->result;
    }
    for (Op* op : graph_.ops()) {
      if (op->kind == OpKind::Param || op->device() != device) continue;
      for (Value*& operand : op->operands) {
        auto replica = replicas.find(operand);
        if (replica != replicas.end()) operand = replica->second;
      }
    }
  }

  std::vector<Bucket> cutBuckets() const {
    std::vector<Bucket> buckets;
    std::map<std::pair<std::string, int>, size_t> open;  // (device, dtype) -> bucket
    for (Value* value : reduced_) {
      auto key = std::make_pair(value->type.device.str(), static_cast<int>(value->type.dtype));
      int64_t bytes = value->type.bytes();
      auto found = open.find(key);
      // A bucket is packed by one concat kernel, which can be passed kMaxKernelArgs - 1
      // tensors: a network of many small params (MobileNetV2's 158 in 25 MB) fills more.
      if (found == open.end() || buckets[found->second].bytes + bytes > context_.bucketBytes ||
          buckets[found->second].values.size() + 1 > static_cast<size_t>(kMaxKernelArgs - 1)) {
        open[key] = buckets.size();
        buckets.push_back({});
      }
      Bucket& bucket = buckets[open[key]];
      bucket.values.push_back(value);
      bucket.bytes += bytes;
    }
    return buckets;
  }

  // Packs the bucket right after its last gradient and sends it to every other device; where
  // it arrives, each gradient is unpacked later, before that device's update.
  void send(const Bucket& bucket, size_t index, const std::vector<Device>& devices) {
    Value* last = bucket.values.back();
    Op* after = last->producer ? graph_.nextOp(last->producer) : graph_.ops().front();
    const Device& source = last->type.device;
    SourceLoc loc = last->producer ? last->producer->loc : last->loc;
    std::string name = fmt::format("ddp.bucket{}", index);
    auto insert = [&](OpKind kind, std::vector<Value*> operands, const std::string& base,
                      const Device& device, Attrs attrs) {
      TensorType placeholder = operands.front()->type;
      placeholder.device = device;
      Op* op = graph_.insertOpBefore(after, kind, std::move(operands), graph_.uniqueName(base),
                                     placeholder, std::move(attrs), loc);
      op->result->type = inferResultType(*op);
      return op->result;
    };
    Value* packed = last;
    if (bucket.values.size() > 1) {
      std::vector<Value*> flat;
      for (Value* value : bucket.values) {
        Attrs attrs;
        attrs.set("shape", std::vector<int64_t>{value->type.numel()});
        flat.push_back(insert(OpKind::Reshape, {value}, value->name + ".flat", source, attrs));
      }
      Attrs axis;
      axis.set("axis", int64_t{0});
      packed = insert(OpKind::Concat, flat, name, source, axis);
    }
    int64_t start = 0;
    std::vector<std::pair<Value*, int64_t>> pieces;
    for (Value* value : bucket.values) {
      pieces.push_back({value, start});
      start += value->type.numel();
    }
    for (const Device& device : devices) {
      if (device == source) continue;
      Attrs to;
      to.set("device", device.str());
      Value* arrived =
          insert(OpKind::To, {packed}, packed->name + "." + suffixOf(device), device, to);
      for (auto [value, offset] : pieces)
        arrivals_[device.str()].push_back({value, arrived, offset, bucket.values.size() > 1});
    }
  }

  // The update again on `device`: its params' replicas, the gradients as they arrived.
  void cloneUpdate(const Device& device) {
    std::map<const Value*, Value*> mapped(replicas_[device.str()].begin(),
                                          replicas_[device.str()].end());
    std::string suffix = suffixOf(device);
    auto append = [&](OpKind kind, std::vector<Value*> operands, const std::string& base,
                      Attrs attrs, const SourceLoc& loc) {
      TensorType placeholder = operands.front()->type;
      placeholder.device = device;
      Op* op = graph_.appendOp(kind, std::move(operands), graph_.uniqueName(base + "." + suffix),
                               placeholder, std::move(attrs), loc);
      op->result->type = inferResultType(*op);
      return op->result;
    };
    // Each gradient is unpacked right before the first op that reads it: an op waits only for
    // the bucket that brings what it reads.
    std::map<const Value*, const Arrival*> arriving;
    for (const Arrival& arrival : arrivals_[device.str()]) arriving[arrival.value] = &arrival;
    auto unpack = [&](const Arrival& arrival) {
      Value* value = arrival.value;
      if (!arrival.packed) return arrival.bucket;
      Attrs range;
      range.set("axis", int64_t{0});
      range.set("start", arrival.offset);
      range.set("end", arrival.offset + value->type.numel());
      const SourceLoc& loc = value->producer ? value->producer->loc : value->loc;
      Value* piece = append(OpKind::Slice, {arrival.bucket}, value->name + ".flat", range, loc);
      Attrs shape;
      shape.set("shape", std::vector<int64_t>(value->type.shape.begin(), value->type.shape.end()));
      return append(OpKind::Reshape, {piece}, value->name, shape, loc);
    };
    for (const Op* op : inArrivalOrder(device)) {
      std::vector<Value*> operands;
      for (Value* operand : op->operands) {
        auto found = mapped.find(operand);
        if (found == mapped.end() && arriving.count(operand))
          found = mapped.emplace(operand, unpack(*arriving.at(operand))).first;
        GXC_CHECK(found != mapped.end(), "the update reads '{}', which {} does not have",
                  operand->name, device.str());
        operands.push_back(found->second);
      }
      mapped[op->result] = append(op->kind, operands, op->layerName(), op->attrs, op->loc);
    }
  }

  // The update's ops in the order their gradients reach `device`: each op ranks as the last
  // gradient it depends on, and a stable sort by rank keeps every op after its operands
  // (theirs is never higher). Updating the first layers' params, whose gradients arrive last,
  // no longer holds back those of the last layers, which arrive first.
  std::vector<const Op*> inArrivalOrder(const Device& device) {
    std::map<const Value*, size_t> rank;
    for (size_t i = 0; i < arrivals_[device.str()].size(); ++i)
      rank[arrivals_[device.str()][i].value] = i;
    std::vector<std::pair<size_t, const Op*>> ranked;
    for (const Op* op : update_) {
      size_t own = 0;
      for (const Value* operand : op->operands) {
        auto found = rank.find(operand);
        if (found != rank.end()) own = std::max(own, found->second);
      }
      rank[op->result] = own;
      ranked.push_back({own, op});
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<const Op*> ordered;
    for (const auto& [own, op] : ranked) ordered.push_back(op);
    return ordered;
  }

  struct Arrival {
    Value* value;   // a gradient on the first device
    Value* bucket;  // its bucket on this device
    int64_t offset;
    bool packed;  // the bucket holds several: a slice of it
  };

  Graph& graph_;
  const PassContext& context_;
  Device front_;
  std::vector<Op*> update_;
  std::set<const Value*> assigned_;
  std::vector<Value*> params_;
  std::vector<Value*> reduced_;
  std::map<std::string, std::map<Value*, Value*>> replicas_;  // device -> param -> replica
  std::map<std::string, std::vector<Arrival>> arrivals_;      // device -> gradients
};

}  // namespace

bool ReplicateUpdatePass::run(Graph& graph, const PassContext& context) const {
  return Replicator(graph, context).run();
}

}  // namespace gxc
