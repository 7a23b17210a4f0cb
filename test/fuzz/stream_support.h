#pragma once
// What the watch-stream and list-page targets share: framing a body whole and
// in pieces with the production scanner (the two must agree), and applying
// decoded objects to a view as the watch's handler does, then deciding once
// on that view (fuzzed nodes reach the engine's arithmetic).

#include "scoring/json_stream_scanner.h"
#include "scoring/json_value.h"
#include "scoring/model.h"
#include "test/fuzz/fuzz_support.h"

namespace placer::fuzz {

struct Framed {
  std::vector<std::string> values;    // handed to the value sink, in order
  std::vector<std::string> metadata;  // ListItems: handed to the metadata sink
  std::optional<std::string> error;   // the first error (feed or finish)
};

// Frames `pieces` with a scanner in `mode`; `accept` may refuse a value
// (as the watch refuses a malformed event), which ends the stream.
inline Framed frame(JsonStreamScanner::Mode mode, const std::vector<std::string_view>& pieces,
                    const std::function<Outcome(std::string_view)>& accept = nullptr) {
  Framed out;
  auto onValue = [&](std::string_view bytes) -> Outcome {
    out.values.emplace_back(bytes);
    return accept ? accept(bytes) : Outcome{};
  };
  auto onMetadata = [&](std::string_view bytes) -> Outcome {
    out.metadata.emplace_back(bytes);
    return {};
  };
  JsonStreamScanner scanner(mode, onValue, mode == JsonStreamScanner::Mode::ListItems ? JsonStreamScanner::Sink(onMetadata) : nullptr);
  for (std::string_view piece : pieces) {
    if (Outcome fed = scanner.feed(piece); !fed) {
      out.error = fed.error().message;
      return out;
    }
  }
  if (Outcome done = scanner.finish(); !done) out.error = done.error().message;
  return out;
}

// The same values and the same error whether the body came whole or in pieces.
inline void checkSameFraming(const Framed& whole, const Framed& cut, std::string_view text) {
  FUZZ_CHECK(whole.values == cut.values, std::string("values differ when fed in pieces: ") + std::string(text));
  FUZZ_CHECK(whole.metadata == cut.metadata, std::string("metadata differs when fed in pieces: ") + std::string(text));
  FUZZ_CHECK(whole.error == cut.error, "errors differ: " + whole.error.value_or("none") + " / " + cut.error.value_or("none"));
}

// An object of a watch or list, decoded as the nodes' and the pods' handlers
// decode it, applied to `view` (upsert, or removal by name / key).
inline void apply(MutableClusterView& view, const JsonValue& object, bool remove) {
  if (auto node = decodeNode(object)) {
    if (remove)
      view.removeNode(node->name);
    else
      view.upsertNode(std::move(*node));
  } else {
    FUZZ_CHECK(!node.error().message.empty(), "node decode error says why");
  }
  if (auto pod = decodePod(object)) {
    if (remove)
      view.removePod(podKey(*pod));
    else
      view.upsertPod(*pod);
  } else {
    FUZZ_CHECK(!pod.error().message.empty(), "pod decode error says why");
  }
}

// One decision on the view the input built: its answer must be one of its nodes.
inline void decideOn(const MutableClusterView& view) {
  Decision d = cluster().engine->place(probePod(), view, Detail::Full);
  FUZZ_CHECK(d.feasibleCount <= d.nodeCount, "feasible <= nodes");
  if (d.selected) FUZZ_CHECK(view.findNode(d.selected->name()) == d.selected, "selected node is in the view");
  (void)d.unschedulableMessage();
}

}  // namespace placer::fuzz
