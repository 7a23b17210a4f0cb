#pragma once
// Per-decision counts by id without paying for the view's bound: a
// thread's reused, all-zero arrays (ScratchCounts) and the few counts kept
// of them (SparseCounts).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace placer {

// Counts indexed by id (a node label value id, a NodeInfo::id), all 0 when
// lent, for the length of one call on this thread: the array comes from a
// pool of this thread's arrays and goes back with only the entries written
// cleared, so a decision pays for the ids it touches, not for the view's
// bound (before: tens of KB zeroed per constraint and a malloc large enough
// to consolidate the heap when freed). Never kept beyond the call that made
// it (the pool is the thread's). Not thread-safe.
class ScratchCounts {
 public:
  explicit ScratchCounts(size_t bound);
  ~ScratchCounts();
  ScratchCounts(ScratchCounts&& other) noexcept
      : array_(std::move(other.array_)),
        counts_(std::exchange(other.counts_, nullptr)),
        bound_(std::exchange(other.bound_, 0)),
        touched_(std::move(other.touched_)) {}
  ScratchCounts(const ScratchCounts&) = delete;
  ScratchCounts& operator=(const ScratchCounts&) = delete;
  ScratchCounts& operator=(ScratchCounts&&) = delete;

  // Ids at or past the bound are ignored by add() and read as 0.
  void add(uint32_t id, int64_t n) {
    if (id >= bound_) return;
    int64_t& count = counts_[id];
    if (count == 0 && n != 0) touched_.push_back(id);
    count += n;
  }
  int64_t get(uint32_t id) const { return id < bound_ ? counts_[id] : 0; }
  // The counts by id, bound() of them (null when the bound is 0), for hot loops.
  const int64_t* data() const { return counts_; }
  size_t bound() const { return bound_; }
  // Ids whose count is not 0, in the order first touched (an id may repeat
  // if its count went back to 0 and up again; callers check get()).
  const std::vector<uint32_t>& touched() const { return touched_; }

 private:
  std::unique_ptr<std::vector<int64_t>> array_;  // from this thread's pool, back to it when done
  int64_t* counts_ = nullptr;                     // array_'s data, bound_ entries at least
  size_t bound_ = 0;
  std::vector<uint32_t> touched_;
};

// The counts of a ScratchCounts that are not 0, sorted by id: what a
// decision's state keeps of them for the reads after the call that counted.
class SparseCounts {
 public:
  SparseCounts() = default;
  // `offset` is subtracted from every count (entries reaching 0 are dropped).
  explicit SparseCounts(const ScratchCounts& counts, int64_t offset = 0);
  int64_t get(uint32_t id) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), id,
                               [](const std::pair<uint32_t, int64_t>& e, uint32_t key) { return e.first < key; });
    return it != entries_.end() && it->first == id ? it->second : 0;
  }

 private:
  std::vector<std::pair<uint32_t, int64_t>> entries_;
};

}  // namespace placer
