#include "scoring/scratch_counts.h"

namespace placer {

namespace {

// This thread's arrays for ScratchCounts, each all 0 while in the pool.
std::vector<std::unique_ptr<std::vector<int64_t>>>& scratchPool() {
  thread_local std::vector<std::unique_ptr<std::vector<int64_t>>> pool;
  return pool;
}

}  // namespace

ScratchCounts::ScratchCounts(size_t bound) : bound_(bound) {
  if (bound == 0) return;
  auto& pool = scratchPool();
  if (pool.empty()) {
    array_ = std::make_unique<std::vector<int64_t>>();
  } else {
    array_ = std::move(pool.back());
    pool.pop_back();
  }
  if (array_->size() < bound) array_->resize(bound, 0);
  counts_ = array_->data();
}

ScratchCounts::~ScratchCounts() {
  if (array_ == nullptr) return;
  for (uint32_t id : touched_) counts_[id] = 0;
  scratchPool().push_back(std::move(array_));
}

SparseCounts::SparseCounts(const ScratchCounts& counts, int64_t offset) {
  for (uint32_t id : counts.touched())
    if (const int64_t n = counts.get(id) - offset; n != 0) entries_.emplace_back(id, n);
  std::sort(entries_.begin(), entries_.end());
  entries_.erase(std::unique(entries_.begin(), entries_.end()), entries_.end());
}

}  // namespace placer
