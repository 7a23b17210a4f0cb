#include "webhook/extender.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "scoring/json_value.h"
#include "scoring/placement.h"
#include "webhook/json_text.h"
#include "webhook/kube/json_stream.h"
#include "webhook/log.h"

namespace placer {
namespace {

using nlohmann::json;

// Requests are located with the raw scanner of webhook/kube/json_stream (a
// full NodeList of 5,000 nodes is tens of MB): members of the top-level object
// as byte ranges, then only what is needed is parsed (the pod and each node
// with the fields the model reads), and passing nodes are echoed byte for byte.
// Answers are written by hand into one string (webhook/json_text.h).

using kube::RawMember;

bool equalFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// Go's encoding/json: the exact key if present, else a case-insensitive match.
// Null is reported as absent (Go leaves the field nil).
std::optional<std::string_view> member(const std::vector<RawMember>& members, std::string_view goName) {
  const RawMember* folded = nullptr;
  const RawMember* exact = nullptr;
  for (const RawMember& m : members) {
    if (m.key == goName) exact = &m;
    else if (!folded && equalFold(m.key, goName)) folded = &m;
  }
  const RawMember* found = exact ? exact : folded;
  if (!found || found->value == "null") return std::nullopt;
  return found->value;
}

const json* jsonMember(const json& object, std::string_view goName) {
  if (!object.is_object()) return nullptr;
  const json* folded = nullptr;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it.key() == goName) return it->is_null() ? nullptr : &*it;
    if (!folded && equalFold(it.key(), goName)) folded = &*it;
  }
  return folded && !folded->is_null() ? folded : nullptr;
}

Result<Pod> decodePodBytes(std::string_view bytes, std::string_view field) {
  std::optional<JsonParser> own;
  auto parsed = threadParserFor(bytes.size(), own).parse(bytes);
  if (!parsed) return fieldError(field, parsed.error().message);
  auto pod = decodePod(*parsed);
  if (!pod) return fieldError(field, pod.error().message);
  return pod;
}

HttpResponse badRequest(std::string message) { return HttpResponse::text(400, std::move(message) + "\n"); }

// ---------------------------------------------------------------------------
// ExtenderArgs

struct ExtenderArgs {
  Pod pod;
  bool cacheCapable = false;                 // NodeNames given
  std::vector<std::string_view> nodeNames;   // NodeNames, viewing the body (or escapedNames)
  std::deque<std::string> escapedNames;      // the few names sent with escapes, unescaped
  std::vector<Node> nodes;                   // Nodes.items, decoded
  std::vector<std::string_view> nodeBytes;   // Nodes.items as sent, for the echo
};

// Word-at-a-time scans and order keys read names as little-endian words.
static_assert(std::endian::native == std::endian::little);

bool jsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The first '"' or '\\' in [p, end), or end: 8 bytes at a time.
const char* quoteOrBackslash(const char* p, const char* end) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  auto hasZeroByte = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  for (; p + 8 <= end; p += 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    // The lowest flagged byte is exact (only bytes above a match can be flagged falsely).
    if (uint64_t found = hasZeroByte(w ^ (kOnes * '"')) | hasZeroByte(w ^ (kOnes * '\\')); found != 0)
      return p + __builtin_ctzll(found) / 8;
  }
  while (p < end && *p != '"' && *p != '\\') ++p;
  return p;
}

// The usual NodeNames: an array of strings without escapes, each viewed in
// place, in one pass over the bytes. False (names cleared) for anything else,
// which the general path then reads or rejects with its own message.
bool plainNodeNames(std::string_view bytes, std::vector<std::string_view>& names) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  auto skipSpace = [&] {
    while (p < end && jsonSpace(*p)) ++p;
  };
  auto giveUp = [&] {
    names.clear();
    return false;
  };
  skipSpace();
  if (p == end || *p != '[') return giveUp();
  ++p;
  skipSpace();
  if (p < end && *p == ']') {
    ++p;
    skipSpace();
    return p == end || giveUp();
  }
  names.reserve(bytes.size() / 8 + 1);  // names of 5 bytes or more: no regrowth
  while (true) {
    skipSpace();
    if (p == end || *p != '"') return giveUp();
    const char* start = ++p;
    p = quoteOrBackslash(p, end);
    if (p == end || *p != '"') return giveUp();  // unterminated, or an escape
    names.emplace_back(start, static_cast<size_t>(p - start));
    ++p;
    skipSpace();
    if (p == end) return giveUp();
    if (*p == ']') {
      ++p;
      skipSpace();
      return p == end || giveUp();
    }
    if (*p != ',') return giveUp();
    ++p;
  }
}

// NodeNames: an array of strings, viewed in place (node names have no escapes;
// the rare string that does is unescaped into `escaped`).
Outcome decodeNodeNames(std::string_view bytes, std::vector<std::string_view>& names,
                        std::deque<std::string>& escaped) {
  if (plainNodeNames(bytes, names)) return {};
  auto elements = kube::rawArrayElements(bytes);
  if (!elements) return Error{"ExtenderArgs.NodeNames: " + elements.error().message};
  names.reserve(elements->size());
  for (size_t i = 0; i < elements->size(); ++i) {
    std::string_view e = (*elements)[i];
    if (e.size() < 2 || e.front() != '"') return Error{indexedField("ExtenderArgs.NodeNames", i) + ": expected a string"};
    std::string_view inner = e.substr(1, e.size() - 2);
    if (inner.find('\\') == std::string_view::npos) {
      names.push_back(inner);
      continue;
    }
    auto text = kube::unescapeJsonString(e);
    if (!text) return Error{indexedField("ExtenderArgs.NodeNames", i) + ": " + text.error().message};
    names.push_back(escaped.emplace_back(std::move(*text)));
  }
  return {};
}

Outcome decodeArgs(std::string_view body, ExtenderArgs& args) {
  auto members = kube::rawObjectMembers(body);
  if (!members) return Error{"ExtenderArgs: " + members.error().message};
  auto pod = member(*members, "Pod");
  if (!pod) return Error{"ExtenderArgs.Pod: required"};
  auto decoded = decodePodBytes(*pod, "ExtenderArgs.Pod");
  if (!decoded) return decoded.error();
  args.pod = std::move(*decoded);

  if (auto names = member(*members, "NodeNames")) {
    args.cacheCapable = true;
    return decodeNodeNames(*names, args.nodeNames, args.escapedNames);
  }
  auto nodes = member(*members, "Nodes");
  if (!nodes) return Error{"ExtenderArgs: neither NodeNames nor Nodes is given"};
  auto listMembers = kube::rawObjectMembers(*nodes);
  if (!listMembers) return Error{"ExtenderArgs.Nodes: " + listMembers.error().message};
  auto items = member(*listMembers, "items");
  if (!items) return {};  // an empty NodeList
  std::vector<std::string_view> elements;
  if (Outcome split = kube::rawArrayElements(*items, elements); !split)
    return Error{"ExtenderArgs.Nodes.items: " + split.error().message};
  // Each node parsed with simdjson's DOM, which validates the whole element
  // (syntax, UTF-8), so the bytes echoed in the answer are a valid JSON text.
  std::optional<JsonParser> own;
  args.nodes.reserve(elements.size());
  args.nodeBytes.reserve(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    auto parsed = threadParserFor(elements[i].size(), own).parse(elements[i]);
    if (!parsed) return fieldError(indexedField("ExtenderArgs.Nodes.items", i), parsed.error().message);
    auto node = decodeNode(*parsed);
    if (!node) return fieldError(indexedField("ExtenderArgs.Nodes.items", i), node.error().message);
    args.nodes.push_back(std::move(*node));
    args.nodeBytes.push_back(elements[i]);
  }
  return {};
}

// The candidates of a request: NodeInfos from the view (NodeNames), or built
// from the request's nodes with the view's accounting for a node of that name.
struct Candidates {
  std::vector<const NodeInfo*> infos;
  std::vector<uint32_t> requestIndex;  // candidate -> index in the request's list
  std::vector<NodeInfo> owned;         // full-Nodes mode
  std::vector<uint32_t> unknown;       // request indices of NodeNames placer does not know
};

constexpr std::string_view kUnknownNode = "node(s) were not found in placer's cluster view";

Candidates resolveCandidates(ExtenderArgs& args, const ClusterView& view) {
  Candidates c;
  if (args.cacheCapable) {
    // One batched lookup into c.infos, then the unknown names taken out in place.
    view.findNodes(args.nodeNames, c.infos);
    c.requestIndex.reserve(c.infos.size());
    size_t known = 0;
    for (size_t i = 0; i < c.infos.size(); ++i) {
      if (c.infos[i] != nullptr) {
        c.infos[known++] = c.infos[i];
        c.requestIndex.push_back(static_cast<uint32_t>(i));
      } else {
        c.unknown.push_back(static_cast<uint32_t>(i));
      }
    }
    c.infos.resize(known);
    return c;
  }
  c.owned.resize(args.nodes.size());
  c.requestIndex.reserve(args.nodes.size());
  for (size_t i = 0; i < args.nodes.size(); ++i) {
    Node& node = args.nodes[i];
    NodeInfo& info = c.owned[i];
    // The request's node object is authoritative for the node's own fields;
    // the usage by pods and reservations comes from placer's view. Only the
    // accounting is copied: the view's Node (labels, images, ...) is replaced anyway.
    if (const NodeInfo* known = view.findNode(node.name)) {
      AccountingReadGuard guard(view, std::span<const NodeInfo* const>(&known, 1));
      info.requested = known->requested;
      info.nonZeroRequested = known->nonZeroRequested;
      info.podCount = known->podCount;
      info.usedPorts = known->usedPorts;
      info.podSlots = known->podSlots;
      info.generation = known->generation;
      info.id = known->id;
      // Image sizes by the view's image ids, from the request's images. A node
      // the view does not know keeps none, so ImageLocality reads its images
      // directly instead of another node's precomputed sum at its id.
      node.images.forEachName([&](std::string_view name, int64_t size) {
        if (uint32_t id = view.imageId(name); id != StringTable::kNone) info.imageSizes.emplace_back(id, size);
      });
      std::sort(info.imageSizes.begin(), info.imageSizes.end());
      info.imageSizes.erase(std::unique(info.imageSizes.begin(), info.imageSizes.end(),
                                        [](const auto& a, const auto& b) { return a.first == b.first; }),
                            info.imageSizes.end());
    }
    info.node = std::move(node);
    c.requestIndex.push_back(static_cast<uint32_t>(i));
  }
  c.infos.reserve(c.owned.size());
  for (const NodeInfo& info : c.owned) c.infos.push_back(&info);
  return c;
}

bool viewSynced(const ExtenderContext& context) { return !context.feed || context.feed->synced(); }

// One entry of FailedNodes / FailedAndUnresolvableNodes: the node's reasons
// joined with ", ", or a fixed text. `node` is the name as the request sent it
// (bytes of the body, read in order, rather than each NodeInfo's own copy);
// `rank` is the view node's ClusterView::nameRank, kUnranked for a name the
// view does not hold (or a node of a full NodeList).
constexpr uint32_t kUnranked = UINT32_MAX;

struct Failure {
  std::string_view node;
  const std::vector<std::string>* reasons = nullptr;
  std::string_view text;
  uint32_t rank = kUnranked;
};

// Eight bytes of `name` from `from` on as a big-endian integer, zero-padded:
// among names that agree before `from`, a smaller key means a smaller name
// (and equal keys need the names compared).
uint64_t orderKey(std::string_view name, size_t from) {
  unsigned char bytes[8] = {};
  if (from < name.size()) std::memcpy(bytes, name.data() + from, std::min<size_t>(8, name.size() - from));
  uint64_t word;
  std::memcpy(&word, bytes, 8);
  return __builtin_bswap64(word);
}

// Entries `subset` of `entries` sorted byte-wise by name, entries of the same
// name in their order of insertion. Names mostly share a prefix ("ip-10-0-",
// a pool's name), so they are compared first as integers, by the 16 bytes
// after the prefix all of them share.
std::vector<uint32_t> sortByName(const std::vector<Failure>& entries, const std::vector<uint32_t>& subset) {
  if (subset.empty()) return {};
  struct Keyed {
    uint64_t high;
    uint64_t low;
    uint32_t entry;
  };
  std::string_view reference = entries[subset.front()].node;
  size_t common = reference.size();
  for (uint32_t e : subset) {
    std::string_view name = entries[e].node;
    const size_t limit = std::min(common, name.size());
    size_t k = 0;
    while (k < limit && name[k] == reference[k]) ++k;
    common = k;
  }
  std::vector<Keyed> keyed(subset.size());
  for (size_t i = 0; i < subset.size(); ++i) {
    std::string_view name = entries[subset[i]].node;
    keyed[i] = Keyed{orderKey(name, common), orderKey(name, common + 8), subset[i]};
  }
  std::sort(keyed.begin(), keyed.end(), [&](const Keyed& a, const Keyed& b) {
    if (a.high != b.high) return a.high < b.high;
    if (a.low != b.low) return a.low < b.low;
    if (int c = entries[a.entry].node.compare(entries[b.entry].node); c != 0) return c < 0;
    return a.entry < b.entry;
  });
  std::vector<uint32_t> sorted(keyed.size());
  for (size_t i = 0; i < keyed.size(); ++i) sorted[i] = keyed[i].entry;
  return sorted;
}

// The entries a Go map[string]string would hold, in the order encoding/json
// writes them: keys sorted byte-wise, and of a key assigned more than once the
// last value. Ranked entries are placed by rank (a bucket per rank, the later
// entry overwriting), with no string compared; the rest, normally none, are
// sorted by name and merged in.
std::vector<uint32_t> goMapOrder(const std::vector<Failure>& entries, size_t rankBound) {
  std::vector<uint32_t> byRank;
  std::vector<uint32_t> unranked;
  for (size_t i = 0; i < entries.size(); ++i) {
    const uint32_t rank = entries[i].rank;
    if (rank == kUnranked) {
      unranked.push_back(static_cast<uint32_t>(i));
      continue;
    }
    if (byRank.empty()) byRank.assign(rankBound, kUnranked);
    byRank[rank] = static_cast<uint32_t>(i);
  }
  std::vector<uint32_t> others = sortByName(entries, unranked);
  size_t kept = 0;
  for (size_t i = 0; i < others.size(); ++i)
    if (i + 1 == others.size() || entries[others[i + 1]].node != entries[others[i]].node) others[kept++] = others[i];
  others.resize(kept);

  std::vector<uint32_t> order;
  order.reserve(entries.size());
  size_t next = 0;  // into others
  for (uint32_t e : byRank) {
    if (e == kUnranked) continue;
    for (; next < others.size() && entries[others[next]].node <= entries[e].node; ++next) {
      if (entries[others[next]].node == entries[e].node) {  // one name both ways: the later entry
        e = std::max(e, others[next]);
        continue;
      }
      order.push_back(others[next]);
    }
    order.push_back(e);
  }
  order.insert(order.end(), others.begin() + static_cast<std::ptrdiff_t>(next), others.end());
  return order;
}

// The JSON string of a failure's value, written once per distinct value: the
// engine shares one reason list among the nodes rejected alike, so later
// entries copy the bytes written for the first (a few values cover most).
class FailureValues {
 public:
  void append(std::string& out, const Failure& f) {
    for (const Written& w : written_) {
      if (w.length != 0 && w.reasons == f.reasons && w.text.data() == f.text.data() && w.text.size() == f.text.size()) {
        out.append(out, w.offset, w.length);
        return;
      }
    }
    const size_t offset = out.size();
    if (f.reasons == nullptr) {
      appendJsonString(out, f.text);
    } else if (f.reasons->size() == 1) {
      appendJsonString(out, f.reasons->front());
    } else {
      std::string joined;
      for (const std::string& r : *f.reasons) {
        if (!joined.empty()) joined += ", ";
        joined += r;
      }
      appendJsonString(out, joined);
    }
    written_[next_++ % written_.size()] = Written{f.reasons, f.text, offset, out.size() - offset};
  }

 private:
  struct Written {
    const std::vector<std::string>* reasons = nullptr;
    std::string_view text;
    size_t offset = 0;
    size_t length = 0;  // 0: unused
  };
  std::array<Written, 8> written_{};
  size_t next_ = 0;
};

// A Go map[string]string as encoding/json writes it (see goMapOrder). `rankBound`
// is one more than the largest rank an entry may carry.
void appendFailureMap(std::string& out, const std::vector<Failure>& entries, size_t rankBound) {
  out += '{';
  FailureValues values;
  bool first = true;
  for (uint32_t e : goMapOrder(entries, rankBound)) {
    if (!first) out += ',';
    first = false;
    appendJsonString(out, entries[e].node);
    out += ':';
    values.append(out, entries[e]);
  }
  out += '}';
}

// ExtenderFilterResult: exactly one of `echoedNodes` (a NodeList of the nodes as
// sent) and `nodeNames` is non-null, or neither after an error.
std::string filterResult(const std::vector<std::string_view>* echoedNodes, const std::vector<std::string_view>* nodeNames,
                         const std::vector<Failure>& failed, const std::vector<Failure>& unresolvable,
                         std::string_view error, size_t rankBound = 0) {
  size_t size = 128 + error.size();
  if (echoedNodes)
    for (std::string_view n : *echoedNodes) size += n.size() + 1;
  if (nodeNames)
    for (std::string_view n : *nodeNames) size += n.size() + 3;
  for (const auto* list : {&failed, &unresolvable}) {
    for (const Failure& f : *list) {
      size += f.node.size() + 8 + f.text.size();
      if (f.reasons)
        for (const std::string& r : *f.reasons) size += r.size() + 2;
    }
  }
  size += size / 64;  // escapes
  std::string out;
  out.reserve(size);
  out += "{\"Nodes\":";
  if (echoedNodes) {
    out += "{\"metadata\":{},\"items\":[";
    for (size_t i = 0; i < echoedNodes->size(); ++i) {
      if (i) out += ',';
      out += (*echoedNodes)[i];
    }
    out += "]}";
  } else {
    out += "null";
  }
  out += ",\"NodeNames\":";
  if (nodeNames) {
    out += '[';
    for (size_t i = 0; i < nodeNames->size(); ++i) {
      if (i) out += ',';
      appendJsonString(out, (*nodeNames)[i]);
    }
    out += ']';
  } else {
    out += "null";
  }
  out += ",\"FailedNodes\":";
  appendFailureMap(out, failed, rankBound);
  out += ",\"FailedAndUnresolvableNodes\":";
  appendFailureMap(out, unresolvable, rankBound);
  out += ",\"Error\":";
  appendJsonString(out, error);
  out += '}';
  return out;
}

// Copies a short run of bytes without a call: word moves, the last one overlapping.
char* putBytes(char* to, std::string_view bytes) {
  const size_t n = bytes.size();
  const char* from = bytes.data();
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) std::memcpy(to + i, from + i, 8);
    std::memcpy(to + n - 8, from + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(to, from, 4);
    std::memcpy(to + n - 4, from + n - 4, 4);
  } else {
    for (size_t i = 0; i < n; ++i) to[i] = from[i];
  }
  return to + n;
}

// One HostPriority, {"Host":"<name>","Score":<n>}, for a name that needs no
// escapes; nullptr (nothing sensible written) for a score outside 0..99, which
// the buffer was not sized for.
constexpr std::string_view kHostPrefix = "{\"Host\":\"";
constexpr std::string_view kScoreInfix = "\",\"Score\":";
constexpr size_t kHostPriorityFixedBytes = kHostPrefix.size() + kScoreInfix.size() + 1;  // + '}'

char* putHostPriority(char* p, std::string_view host, int64_t score) {
  if (score < 0 || score > 99) return nullptr;
  p = putBytes(p, kHostPrefix);
  p = putBytes(p, host);
  p = putBytes(p, kScoreInfix);
  if (score >= 10) *p++ = static_cast<char>('0' + score / 10);
  *p++ = static_cast<char>('0' + score % 10);
  *p++ = '}';
  return p;
}

HttpResponse filterError(std::string_view message) {
  std::vector<Failure> none;
  return HttpResponse::json(200, filterResult(nullptr, nullptr, none, none, message));
}

}  // namespace

// ---------------------------------------------------------------------------

HttpResponse extenderFilter(const ExtenderContext& context, std::string_view body, bool onlyOne) {
  ExtenderArgs args;
  if (Outcome decoded = decodeArgs(body, args); !decoded) return badRequest(decoded.error().message);
  if (!viewSynced(context)) return filterError("placer: the cluster view is not synced yet");

  return context.state->readForDecision([&](const ClusterView& view) {
    Candidates c = resolveCandidates(args, view);
    // filter_onlyone needs the choice, so scores; filter only the verdicts.
    Decision d = context.engine->evaluate(args.pod, view, c.infos, onlyOne ? Detail::Totals : Detail::FilterOnly,
                                          Engine::CacheUse::Reuse);
    if (d.failure) return filterError(d.unschedulableMessage());

    // Outcomes follow the candidates, candidates the request: every list below
    // is in the request's order, and names are the request's own bytes.
    auto requestName = [&](uint32_t at) -> std::string_view {
      return args.cacheCapable ? args.nodeNames[at] : std::string_view(c.owned[at].name());
    };
    // View nodes (NodeNames) carry their name's rank, which orders the failure maps.
    auto rank = [&](const NodeInfo& node) { return args.cacheCapable ? view.nameRank(node) : kUnranked; };
    const size_t rejected = d.nodes.size() - std::min(d.nodes.size(), d.feasibleCount);
    std::vector<Failure> failed;
    std::vector<Failure> unresolvable;
    failed.reserve(onlyOne ? d.nodes.size() : rejected);
    unresolvable.reserve(c.unknown.size() + rejected);
    for (uint32_t i : c.unknown) unresolvable.push_back(Failure{args.nodeNames[i], nullptr, kUnknownNode});
    std::string notChosen;
    if (onlyOne && d.selected != nullptr) notChosen = "node(s) were not placer's choice (" + d.selected->name() + ")";
    std::vector<std::string_view> passing;
    passing.reserve(d.feasibleCount);
    for (size_t i = 0; i < d.nodes.size(); ++i) {
      const NodeOutcome& o = d.nodes[i];
      const uint32_t at = c.requestIndex[i];
      if (o.code == Code::Success) {
        if (onlyOne && o.node != d.selected) {
          failed.push_back(Failure{requestName(at), nullptr, notChosen, rank(*o.node)});
          continue;
        }
        passing.push_back(args.cacheCapable ? args.nodeNames[at] : args.nodeBytes[at]);
      } else {
        const std::vector<std::string>& reasons = o.reasons;  // the list itself, not a copy
        (o.code == Code::UnschedulableAndUnresolvable ? unresolvable : failed)
            .push_back(Failure{requestName(at), &reasons, {}, rank(*o.node)});
      }
    }
    if (args.cacheCapable)
      return HttpResponse::json(200, filterResult(nullptr, &passing, failed, unresolvable, "", view.nodes().size()));
    return HttpResponse::json(200, filterResult(&passing, nullptr, failed, unresolvable, ""));
  });
}

HttpResponse extenderPrioritize(const ExtenderContext& context, std::string_view body) {
  ExtenderArgs args;
  if (Outcome decoded = decodeArgs(body, args); !decoded) return badRequest(decoded.error().message);
  if (!viewSynced(context)) return HttpResponse::text(503, "placer: the cluster view is not synced yet\n");

  return context.state->readForDecision([&](const ClusterView& view) {
    Candidates c = resolveCandidates(args, view);
    Decision d = context.engine->evaluate(args.pod, view, c.infos, Detail::Totals, Engine::CacheUse::Reuse);
    const size_t count = args.cacheCapable ? args.nodeNames.size() : args.nodes.size();
    auto hostName = [&](size_t i) -> std::string_view {
      return args.cacheCapable ? args.nodeNames[i] : std::string_view(c.owned[i].name());
    };
    int64_t best = 0;
    if (!d.failure)
      for (const NodeOutcome& o : d.nodes)
        if (o.code == Code::Success) best = std::max(best, o.total);
    // Request index i's score: candidates are the request's nodes in order,
    // less the unknown ones (score 0), so one cursor walks both.
    auto scores = [&] {
      return [&, candidate = size_t{0}](size_t i) mutable -> int64_t {
        if (candidate >= d.nodes.size() || c.requestIndex[candidate] != i) return 0;
        const NodeOutcome& o = d.nodes[candidate++];
        return !d.failure && o.code == Code::Success && best > 0 ? o.total * 10 / best : 0;
      };
    };
    // HostPriorityList: [{"Host":...,"Score":...}], in the request's order.
    // Sized for scores of up to two digits (they are 0..10); written straight
    // into the buffer when no name needs escapes, else entry by entry.
    bool plainNames = true;
    size_t size = 2;
    for (size_t i = 0; i < count; ++i) {
      std::string_view host = hostName(i);
      plainNames = plainNames && plainJsonString(host);
      size += kHostPriorityFixedBytes + host.size() + 2 + 1;
    }
    std::string out;
    if (plainNames) {
      out.resize(size);
      char* p = out.data();
      *p++ = '[';
      auto score = scores();
      for (size_t i = 0; i < count && p != nullptr; ++i) {
        if (i) *p++ = ',';
        p = putHostPriority(p, hostName(i), score(i));
      }
      if (p != nullptr) {
        *p++ = ']';
        out.resize(static_cast<size_t>(p - out.data()));
        return HttpResponse::json(200, std::move(out));
      }
      out.clear();
    }
    out.reserve(size);
    out += '[';
    auto score = scores();
    for (size_t i = 0; i < count; ++i) {
      if (i) out += ',';
      out += "{\"Host\":";
      appendJsonString(out, hostName(i));
      out += ",\"Score\":";
      appendJsonInt(out, score(i));
      out += '}';
    }
    out += ']';
    return HttpResponse::json(200, std::move(out));
  });
}

namespace {

// Binds a pod after reserving it on the node, as an admission reserves
// (scoring/placement.h): the pod as the API server holds it now, every filter
// on that node against the view and its reservations. A pod that no longer
// fits is not bound (kube-scheduler tries again). The reservation ends when
// the watch shows the pod bound, or here when binding fails. The error text,
// empty when bound.
std::string bindReserved(const ExtenderContext& context, const std::string& ns, const std::string& name,
                         const std::string& uid, const std::string& node) {
  if (!context.binder) return "placer: binding is not configured (no API server connection)";
  std::string key;
  if (viewSynced(context)) {
    auto pod = context.binder->getPod(ns, name);
    if (!pod) return "placer: reading pod " + ns + "/" + name + ": " + pod.error().message;
    if (!uid.empty() && pod->uid != uid)
      return "placer: pod " + ns + "/" + name + " is not the one scheduled (uid " + pod->uid + ", expected " + uid + ")";
    if (pod->nodeName.empty() && !pod->uid.empty()) {
      LocalReservationBook book(*context.engine, *context.state);
      key = bindReservationId(pod->uid);
      Placement p = book.reserveOn(*pod, node, key, std::chrono::steady_clock::now() + context.reservationTtl);
      if (p.outcome == Placement::Outcome::Refused)
        return "placer: pod " + ns + "/" + name + " no longer fits node " + node + ": " + p.reason;
      if (p.outcome != Placement::Outcome::Reserved) key.clear();  // a node placer does not know: nothing to race
    }
  }
  if (Outcome bound = context.binder->bind(ns, name, uid, node); !bound) {
    if (!key.empty()) context.state->update([&](MutableClusterView& view) { view.release(key); });
    return bound.error().message;
  }
  return {};
}

}  // namespace

HttpResponse extenderBind(const ExtenderContext& context, std::string_view body) {
  // The same nesting limit as every other verb's decoder (no stack exhaustion).
  auto parsed = kube::parseWhole(body);
  if (!parsed) return badRequest("ExtenderBindingArgs: " + parsed.error().message);
  const json args = std::move(*parsed);
  if (!args.is_object()) return badRequest("ExtenderBindingArgs: expected a JSON object");
  auto field = [&](std::string_view name) -> Result<std::string> {
    const json* v = jsonMember(args, name);
    if (!v) return std::string();
    if (!v->is_string()) return Error{"ExtenderBindingArgs." + std::string(name) + ": expected a string"};
    return v->get<std::string>();
  };
  auto name = field("PodName");
  auto ns = field("PodNamespace");
  auto uid = field("PodUID");
  auto node = field("Node");
  for (auto* f : {&name, &ns, &uid, &node})
    if (!*f) return badRequest(f->error().message);
  if (name->empty()) return badRequest("ExtenderBindingArgs.PodName: required");
  if (node->empty()) return badRequest("ExtenderBindingArgs.Node: required");

  std::string error = bindReserved(context, *ns, *name, *uid, *node);
  logEvent(error.empty() ? LogLevel::Info : LogLevel::Warning, "extender bind",
           {{"pod", *ns + "/" + *name}, {"node", *node}, {"error", error}});
  std::string out = "{\"Error\":";
  appendJsonString(out, error);  // the API server's message may quote the request's (untrusted) names
  out += '}';
  return HttpResponse::json(200, std::move(out));
}

HttpResponse extenderPreempt(const ExtenderContext& context, std::string_view body) {
  auto members = kube::rawObjectMembers(body);
  if (!members) return badRequest("ExtenderPreemptionArgs: " + members.error().message);
  auto podBytes = member(*members, "Pod");
  if (!podBytes) return badRequest("ExtenderPreemptionArgs.Pod: required");
  auto pod = decodePodBytes(*podBytes, "ExtenderPreemptionArgs.Pod");
  if (!pod) return badRequest(pod.error().message);

  // Victims per node, in either shape: uids, and (full pods) their decoded
  // accounting for pods placer's view does not hold.
  struct Victim {
    std::string uid;
    std::optional<Pod> pod;
  };
  struct NodeVictims {
    std::vector<Victim> victims;
    int64_t numPdbViolations = 0;
  };
  std::map<std::string, NodeVictims> proposed;
  try {
    // nodeCacheCapable schedulers send uids only; others whole pods.
    auto mapBytes = member(*members, "NodeNameToMetaVictims");
    const bool meta = mapBytes.has_value();
    if (!meta) mapBytes = member(*members, "NodeNameToVictims");
    const std::string mapName = meta ? "NodeNameToMetaVictims" : "NodeNameToVictims";
    if (mapBytes) {
      auto parsedMap = kube::parseWhole(*mapBytes);
      if (!parsedMap) return badRequest("ExtenderPreemptionArgs." + mapName + ": " + parsedMap.error().message);
      json map = std::move(*parsedMap);
      if (!map.is_object()) return badRequest("ExtenderPreemptionArgs." + mapName + ": expected an object");
      for (auto it = map.begin(); it != map.end(); ++it) {
        const std::string where = "ExtenderPreemptionArgs." + mapName + "[" + it.key() + "]";
        NodeVictims& nv = proposed[it.key()];
        if (it->is_null()) continue;
        if (!it->is_object()) return badRequest(where + ": expected an object");
        if (const json* n = jsonMember(*it, "NumPDBViolations")) {
          if (!n->is_number_integer()) return badRequest(where + ".NumPDBViolations: expected an integer");
          nv.numPdbViolations = n->get<int64_t>();
        }
        const json* pods = jsonMember(*it, "Pods");
        if (!pods) continue;
        if (!pods->is_array()) return badRequest(where + ".Pods: expected an array");
        for (size_t i = 0; i < pods->size(); ++i) {
          const json& p = (*pods)[i];
          const std::string at = where + ".Pods[" + std::to_string(i) + "]";
          Victim v;
          if (meta) {
            const json* uid = jsonMember(p, "UID");
            if (!uid || !uid->is_string()) return badRequest(at + ".UID: expected a string");
            v.uid = uid->get<std::string>();
          } else {
            auto decoded = decodePod(p);
            if (!decoded) return badRequest(at + ": " + decoded.error().message);
            v.uid = decoded->uid;
            if (v.uid.empty()) return badRequest(at + ".metadata.uid: required");
            v.pod = std::move(*decoded);
          }
          nv.victims.push_back(std::move(v));
        }
      }
    }
  } catch (const json::exception& e) {
    return badRequest(std::string("ExtenderPreemptionArgs: ") + e.what());
  }
  if (!viewSynced(context)) return HttpResponse::text(503, "placer: the cluster view is not synced yet\n");

  return context.state->readForDecision([&](const ClusterView& view) {
    json result = json::object();
    for (const auto& [nodeName, nv] : proposed) {
      const NodeInfo* known = view.findNode(nodeName);
      if (!known) continue;
      NodeInfo trial = [&] {
        AccountingReadGuard guard(view, std::span<const NodeInfo* const>(&known, 1));
        return *known;
      }();
      for (const Victim& v : nv.victims) {
        const PodRecord* record = view.findPod(v.uid);
        if (record && record->attached && view.text(record->nodeNameId) == nodeName) {
          Resources nonZero;
          nonZero.milliCpu = record->nonZeroMilliCpu;
          nonZero.memory = record->nonZeroMemory;
          trial.removeUsage(record->requests, nonZero, record->hostPorts);
        } else if (v.pod && v.pod->nodeName == nodeName && !record) {
          trial.removeUsage(v.pod->requests, v.pod->nonZeroRequests, v.pod->hostPorts);
        }
      }
      const NodeInfo* candidate = &trial;
      Decision d = context.engine->evaluate(*pod, view, std::span<const NodeInfo* const>(&candidate, 1), Detail::FilterOnly);
      if (d.feasibleCount != 1 || d.failure) continue;
      json uids = json::array();
      for (const Victim& v : nv.victims) uids.push_back({{"UID", v.uid}});
      result[nodeName] = {{"Pods", uids}, {"NumPDBViolations", nv.numPdbViolations}};
    }
    // Names and uids come from the request: bytes that are not UTF-8 become U+FFFD, never an exception.
    return HttpResponse::json(
        200, json{{"NodeNameToMetaVictims", result}}.dump(-1, ' ', false, json::error_handler_t::replace));
  });
}

std::vector<Route> extenderRoutes(const ExtenderContext& context) {
  MetricsRegistry& metrics = *context.metrics;
  struct Verb {
    const char* path;
    const char* name;
    std::function<HttpResponse(std::string_view)> handle;
    RouteHandler shed;  // when the listener's queue is full: a well-formed error of the verb's kind
  };
  const ExtenderContext ctx = context;
  constexpr std::string_view kOverloaded = "placer: overloaded (every worker busy, the queue full)";
  auto overloadedFilter = [kOverloaded](const HttpRequest&) { return filterError(kOverloaded); };
  auto overloaded = [kOverloaded](const HttpRequest&) { return HttpResponse::text(503, std::string(kOverloaded) + "\n"); };
  std::vector<Verb> verbs = {
      {"/filter", "filter", [ctx](std::string_view b) { return extenderFilter(ctx, b, false); }, overloadedFilter},
      {"/filter_onlyone", "filter_onlyone", [ctx](std::string_view b) { return extenderFilter(ctx, b, true); },
       overloadedFilter},
      {"/prioritize", "prioritize", [ctx](std::string_view b) { return extenderPrioritize(ctx, b); }, overloaded},
      {"/bind", "bind", [ctx](std::string_view b) { return extenderBind(ctx, b); },
       [kOverloaded](const HttpRequest&) {
         std::string body = "{\"Error\":";
         appendJsonString(body, kOverloaded);
         body += '}';
         return HttpResponse::json(200, std::move(body));
       }},
      {"/preempt", "preempt", [ctx](std::string_view b) { return extenderPreempt(ctx, b); }, overloaded},
  };
  std::vector<Route> routes;
  for (Verb& verb : verbs) {
    Histogram& latency = metrics.histogram("placer_extender_request_duration_seconds",
                                           "Extender request handling time by verb.", latencyBuckets(),
                                           {{"verb", verb.name}});
    Counter& ok = metrics.counter("placer_extender_requests_total", "Extender requests by verb and HTTP code.",
                                  {{"verb", verb.name}, {"code", "200"}});
    Counter& bad = metrics.counter("placer_extender_requests_total", "Extender requests by verb and HTTP code.",
                                   {{"verb", verb.name}, {"code", "400"}});
    Counter& unavailable = metrics.counter("placer_extender_requests_total",
                                           "Extender requests by verb and HTTP code.",
                                           {{"verb", verb.name}, {"code", "503"}});
    routes.push_back(Route{"POST", verb.path,
                           [handle = std::move(verb.handle), &latency, &ok, &bad, &unavailable,
                            name = std::string(verb.name)](const HttpRequest& request) {
                             auto start = std::chrono::steady_clock::now();
                             HttpResponse response = handle(request.body);
                             latency.observe(
                                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
                             (response.status == 200 ? ok : response.status == 400 ? bad : unavailable).inc();
                             if (response.status == 400)
                               logEvent(LogLevel::Warning, "extender: bad request",
                                        {{"verb", name}, {"error", response.body}});
                             return response;
                           },
                           std::move(verb.shed)});
  }
  return routes;
}

bool isLoopbackAddress(std::string_view address) {
  auto hp = splitHostPort(address);
  if (!hp) return false;
  const std::string& host = hp->first;
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace placer
