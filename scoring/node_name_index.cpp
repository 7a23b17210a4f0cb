#include "scoring/node_name_index.h"

#include <algorithm>
#include <cstring>

namespace placer {
namespace {

uint64_t load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint64_t load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// 64×64→128-bit multiply, folded: every input bit reaches the low 32 bits.
uint64_t fold(uint64_t a, uint64_t b) {
  __uint128_t r = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

constexpr uint64_t kSeed = 0xa0761d6478bd642full;
constexpr uint64_t kMix1 = 0xe7037ed1a0b428dbull;
constexpr uint64_t kMix2 = 0x8ebc6af09c88c6e3ull;

// How many names findAll handles per block: enough misses in flight to cover
// the latency of one, few enough that the block's slots stay in L1.
constexpr size_t kBlock = 16;

}  // namespace

// In the manner of wyhash: 16 bytes per multiply, the tail read as two
// overlapping words, so a node name of 8–16 bytes costs two multiplies.
uint64_t NodeNameIndex::hash(std::string_view name) {
  const char* p = name.data();
  size_t n = name.size();
  uint64_t h = kSeed ^ n;
  while (n > 16) {
    h = fold(load64(p) ^ kMix1, load64(p + 8) ^ h);
    p += 16;
    n -= 16;
  }
  uint64_t a = 0;
  uint64_t b = 0;
  if (n >= 8) {
    a = load64(p);
    b = load64(p + n - 8);
  } else if (n >= 4) {
    a = load32(p);
    b = load32(p + n - 4);
  } else if (n > 0) {
    a = (uint64_t{static_cast<unsigned char>(p[0])} << 16) | (uint64_t{static_cast<unsigned char>(p[n / 2])} << 8) |
        static_cast<unsigned char>(p[n - 1]);
  }
  return fold(a ^ kMix1, b ^ h ^ kMix2) ^ h;
}

// Node names are short: word compares inline beat a call to memcmp.
bool NodeNameIndex::sameBytes(const char* a, const char* b, size_t n) {
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8)
      if (load64(a + i) != load64(b + i)) return false;
    return load64(a + n - 8) == load64(b + n - 8);
  }
  if (n >= 4) return load32(a) == load32(b) && load32(a + n - 4) == load32(b + n - 4);
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

uint32_t NodeNameIndex::probe(std::string_view name, uint32_t hash) const {
  if (slots_.empty()) return kNotFound;
  for (size_t i = hash & mask();; i = (i + 1) & mask()) {
    const Slot& slot = slots_[i];
    if (slot.position == kNotFound) return kNotFound;
    if (slot.hash == hash && sameName(slot.position, name)) return slot.position;
  }
}

uint32_t NodeNameIndex::position(std::string_view name) const {
  return probe(name, static_cast<uint32_t>(hash(name)));
}

void NodeNameIndex::findAll(std::span<const std::string_view> names, std::span<uint32_t> positions) const {
  if (slots_.empty()) {
    std::fill(positions.begin(), positions.end(), kNotFound);
    return;
  }
  uint32_t hashes[kBlock];
  for (size_t base = 0; base < names.size(); base += kBlock) {
    const size_t count = std::min(kBlock, names.size() - base);
    // Three dependent reads per name (slot, name reference, name bytes): each
    // stage issues the block's reads before the next stage needs them.
    for (size_t i = 0; i < count; ++i) {
      hashes[i] = static_cast<uint32_t>(hash(names[base + i]));
      __builtin_prefetch(&slots_[hashes[i] & mask()]);
    }
    for (size_t i = 0; i < count; ++i) {
      const Slot& home = slots_[hashes[i] & mask()];
      if (home.position != kNotFound) __builtin_prefetch(&names_[home.position]);
    }
    for (size_t i = 0; i < count; ++i) {
      const Slot& home = slots_[hashes[i] & mask()];
      if (home.position != kNotFound && home.hash == hashes[i])
        __builtin_prefetch(arena_.data() + names_[home.position].offset);
    }
    for (size_t i = 0; i < count; ++i) positions[base + i] = probe(names[base + i], hashes[i]);
  }
}

void NodeNameIndex::place(Slot slot) {
  size_t i = slot.hash & mask();
  while (slots_[i].position != kNotFound) i = (i + 1) & mask();
  slots_[i] = slot;
}

void NodeNameIndex::grow(size_t capacity) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity, Slot{});
  for (const Slot& slot : old)
    if (slot.position != kNotFound) place(slot);
}

void NodeNameIndex::append(std::string_view name) {
  if ((names_.size() + 1) * 2 > slots_.size()) grow(std::max<size_t>(16, slots_.size() * 2));
  // Copy first: `name` may view bytes that the arena's growth would move.
  const NameRef ref{static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(name.size())};
  arena_.append(name);
  const auto position = static_cast<uint32_t>(names_.size());
  names_.push_back(ref);
  place(Slot{static_cast<uint32_t>(hash(this->name(position))), position});

  const std::string_view stored = this->name(position);
  auto at = std::lower_bound(byName_.begin(), byName_.end(), stored,
                             [&](uint32_t p, std::string_view n) { return this->name(p) < n; });
  const size_t rank = static_cast<size_t>(at - byName_.begin());
  byName_.insert(at, position);
  ranks_.push_back(0);
  renumberRanks(rank);
}

void NodeNameIndex::renumberRanks(size_t from) {
  for (size_t r = from; r < byName_.size(); ++r) ranks_[byName_[r]] = static_cast<uint32_t>(r);
}

size_t NodeNameIndex::slotOf(uint32_t position) const {
  size_t i = static_cast<uint32_t>(hash(name(position))) & mask();
  while (slots_[i].position != position) i = (i + 1) & mask();
  return i;
}

// Backward-shift deletion: later slots of the same probe run move up, so
// lookups never need tombstones.
void NodeNameIndex::erase(size_t hole) {
  size_t next = hole;
  for (;;) {
    next = (next + 1) & mask();
    const Slot& candidate = slots_[next];
    if (candidate.position == kNotFound) break;
    const size_t home = candidate.hash & mask();
    // The candidate may fill the hole unless its home lies cyclically in (hole, next].
    const bool homeAfterHole = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
    if (homeAfterHole) continue;
    slots_[hole] = candidate;
    hole = next;
  }
  slots_[hole] = Slot{};
}

void NodeNameIndex::swapRemove(uint32_t position) {
  const auto last = static_cast<uint32_t>(names_.size() - 1);
  erase(slotOf(position));
  arenaGarbage_ += names_[position].length;
  const uint32_t rank = ranks_[position];
  byName_.erase(byName_.begin() + rank);
  renumberRanks(rank);
  if (position != last) {
    slots_[slotOf(last)].position = position;
    names_[position] = names_[last];
    ranks_[position] = ranks_[last];
    byName_[ranks_[position]] = position;
  }
  names_.pop_back();
  ranks_.pop_back();
  if (names_.empty()) {
    arena_.clear();
    arenaGarbage_ = 0;
  } else if (arenaGarbage_ * 2 > arena_.size()) {
    compactArena();
  }
}

// Node churn is rare: once half the arena is removed names, copy the live ones
// (amortised over the removals that made the garbage).
void NodeNameIndex::compactArena() {
  std::string compact;
  compact.reserve(arena_.size() - arenaGarbage_);
  for (NameRef& ref : names_) {
    const uint32_t offset = static_cast<uint32_t>(compact.size());
    compact.append(arena_, ref.offset, ref.length);
    ref.offset = offset;
  }
  arena_ = std::move(compact);
  arenaGarbage_ = 0;
}

}  // namespace placer
