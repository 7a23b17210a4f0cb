#pragma once
// The view's index from node name to position in ClusterView::nodes().
//
// Every extender request names every node (5,000 lookups per request), and
// between requests the engine's pass over the NodeInfos evicts whatever the
// index had in cache. So the index is compact and flat: an open-addressing
// table of {hash, position} slots (linear probing, load at most 1/2) and the
// names copied into one arena, located per position by (offset, length). A
// lookup reads one or two adjacent slots and one run of arena bytes; a batch
// of lookups (findAll) hashes a block of names first and prefetches what each
// will read, so the cache misses of a block overlap instead of queueing.
//
// Lookups are exact: a name is found only if it was appended with the same
// bytes; hashes only choose where to look. Positions mirror the view's node
// vector: append adds at the end, swapRemove moves the last entry into the
// removed one's position, as ClusterView does with its nodes.
//
// The index also keeps each name's rank in byte-wise order, so that answers
// listing nodes sorted by name (the extender's failure maps, written as Go
// writes a map) order thousands of them without comparing a string. Keeping
// ranks costs O(size) per append or removal: node churn is rare.
//
// Thread-safety: none of its own; the view's lock covers it (const members
// from any number of readers, mutations exclusive).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace placer {

class NodeNameIndex {
 public:
  static constexpr uint32_t kNotFound = UINT32_MAX;

  // The position of the node named `name`, or kNotFound.
  uint32_t position(std::string_view name) const;
  // positions[i] = position(names[i]) for every i; positions.size() == names.size().
  void findAll(std::span<const std::string_view> names, std::span<uint32_t> positions) const;

  // Adds `name` at position size(). The name must not be in the index yet.
  void append(std::string_view name);
  // Removes the entry at `position`; the last entry, if another, takes its position.
  void swapRemove(uint32_t position);

  size_t size() const { return names_.size(); }
  // The place of the name at `position` among all names sorted byte-wise (0: first).
  uint32_t rank(uint32_t position) const { return ranks_[position]; }
  std::string_view name(uint32_t position) const {
    const NameRef& ref = names_[position];
    return std::string_view(arena_.data() + ref.offset, ref.length);
  }

  // Map-shaped lookup, so the view's mutation code reads as it did over a
  // hash map: find(name)->second is the position; end() when absent.
  class const_iterator {
   public:
    const_iterator() = default;
    const std::pair<std::string_view, uint32_t>* operator->() const { return &entry_; }
    const std::pair<std::string_view, uint32_t>& operator*() const { return entry_; }
    bool operator==(const const_iterator& other) const { return entry_.second == other.entry_.second; }

   private:
    friend class NodeNameIndex;
    explicit const_iterator(std::pair<std::string_view, uint32_t> entry) : entry_(entry) {}
    std::pair<std::string_view, uint32_t> entry_{std::string_view(), kNotFound};
  };
  const_iterator find(std::string_view name) const {
    uint32_t at = position(name);
    return at == kNotFound ? end() : const_iterator({name, at});
  }
  const_iterator end() const { return const_iterator(); }

  // The hash that places a name (exposed for tests of the table's behaviour
  // under collisions; any value is correct, only speed depends on it).
  static uint64_t hash(std::string_view name);

 private:
  struct Slot {
    uint32_t hash = 0;                // low 32 bits of hash(name): the home slot and a filter
    uint32_t position = kNotFound;    // kNotFound: empty
  };
  struct NameRef {
    uint32_t offset;
    uint32_t length;
  };

  size_t mask() const { return slots_.size() - 1; }
  bool sameName(uint32_t position, std::string_view name) const {
    const NameRef& ref = names_[position];
    return ref.length == name.size() && sameBytes(arena_.data() + ref.offset, name.data(), name.size());
  }
  static bool sameBytes(const char* a, const char* b, size_t n);
  uint32_t probe(std::string_view name, uint32_t hash) const;
  size_t slotOf(uint32_t position) const;
  void place(Slot slot);
  void erase(size_t slotIndex);
  void grow(size_t capacity);
  void compactArena();
  void renumberRanks(size_t from);

  std::vector<Slot> slots_;      // a power of two long, or empty
  std::vector<NameRef> names_;   // by position
  std::vector<uint32_t> byName_; // positions, sorted byte-wise by name
  std::vector<uint32_t> ranks_;  // by position: the index of the position in byName_
  std::string arena_;            // names, back to back; removed ones stay until compactArena
  size_t arenaGarbage_ = 0;      // bytes of removed names in arena_
};

}  // namespace placer
