#pragma once
// Incremental decoding of API server responses without holding them whole.
//
//  - JsonStreamScanner is fed the body in arbitrary pieces (as the socket
//    delivers them) and hands out each complete value it is asked for: every
//    top-level value of a watch stream (concatenated JSON objects; newlines
//    are not relied upon), or every element of a list's "items" array plus the
//    list's "metadata". Everything else is skipped as it streams by.
//  - parseFiltered turns the bytes of one complete value into a JSON value that
//    holds only the fields a FieldFilter lists; skipped fields (managedFields,
//    probes, env, status.conditions, ...) are stepped over without being built.
//
// Measured against a full nlohmann DOM parse in test/bench/watch_decode_bench.cpp.
// Thread-safety: none; one scanner per stream.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring/result.h"

namespace placer::kube {

// Which fields of a JSON value to keep. A filter with no children keeps the
// whole value; otherwise only the listed keys of an object are kept, each with
// its own filter. Arrays apply the filter to every element; scalars are kept.
class FieldFilter {
 public:
  // A compact spelling: "metadata{name,labels},spec{containers{name,resources}},status{phase}".
  // Keys may contain any character but ",{}*" and whitespace. A key ending in
  // "*" keeps its value as its JSON text (a string holding the bytes as sent),
  // for callers that decode it themselves. Aborts on a malformed spec
  // (filters are compile-time constants of this program).
  static FieldFilter parse(std::string_view spec);

  bool keepsAll() const { return children_.empty(); }
  bool keepsText() const { return text_; }
  const FieldFilter* child(std::string_view key) const;

 private:
  std::vector<std::pair<std::string, FieldFilter>> children_;
  bool text_ = false;
};

// The fields of a v1.Pod / v1.Node that decodePod / decodeNode read.
const FieldFilter& podFilter();
const FieldFilter& nodeFilter();
// nodeFilter() with status.images kept as JSON text (the bulk of a node
// object), for callers that decode the images themselves (the extender's full NodeList).
const FieldFilter& nodeFilterWithImagesText();
// Keeps the whole value.
const FieldFilter& keepEverything();
// An admission.k8s.io/v1 AdmissionReview: what reviewAdmission reads of the
// request, and of request.object what decodePod reads.
const FieldFilter& admissionReviewFilter();

// Parses one complete JSON value, keeping only what `filter` lists.
// Errors say what is wrong and at which byte offset. Never throws.
Result<nlohmann::json> parseFiltered(std::string_view bytes, const FieldFilter& filter);

// The raw structure of one complete JSON value, without building it: for
// decoders that pick a few members of a large document (extender requests of
// tens of MB) and parse or echo only those. Only the structure is checked
// (strings closed, brackets balanced, separators in place); a member's or
// element's value is validated when it is itself parsed. Never throws.
struct RawMember {
  std::string key;         // unescaped
  std::string_view value;  // the value's bytes as sent
};
Result<std::vector<RawMember>> rawObjectMembers(std::string_view bytes);  // an object, in document order
Result<std::vector<std::string_view>> rawArrayElements(std::string_view bytes);
// The same into a caller's vector (cleared first), so a loop reuses its capacity.
Outcome rawObjectMembers(std::string_view bytes, std::vector<RawMember>& out);
Outcome rawArrayElements(std::string_view bytes, std::vector<std::string_view>& out);

// Each element of an array parsed with `filter` and handed to `sink` with its
// bytes as sent, one at a time: one pass over the array (a v1.NodeList's
// items, decoded and echoed), and only one element's JSON value alive at once.
// An error from the sink ends the walk and is returned.
using FilteredElementSink = std::function<Outcome(size_t index, std::string_view bytes, nlohmann::json& value)>;
Outcome forEachFilteredElement(std::string_view arrayBytes, const FieldFilter& filter, const FilteredElementSink& sink);

// A JSON string token (quotes included) unescaped; `quoted` must be one whole token.
Result<std::string> unescapeJsonString(std::string_view quoted);

class JsonStreamScanner {
 public:
  enum class Mode {
    TopLevelValues,  // a watch stream: every top-level value
    ListItems,       // a list: each element of "items", and "metadata"
  };
  // `bytes` is valid only during the call.
  using Sink = std::function<Outcome(std::string_view bytes)>;

  // In ListItems mode onMetadata receives the list's "metadata" object.
  JsonStreamScanner(Mode mode, Sink onValue, Sink onMetadata = nullptr);

  // Feeds the next piece of the body. An error (malformed JSON, or one returned
  // by a sink) ends the stream: later calls return it again.
  Outcome feed(std::string_view piece);
  // The body ended: an error if a value is incomplete (or, for a list, if the
  // top-level object is not closed).
  Outcome finish();

  uint64_t bytesSeen() const { return offset_; }

 private:
  Outcome fail(std::string message, uint64_t at);
  // The captured value ends at piece[to - 1]; it began at piece[from] or in an earlier piece.
  Outcome emitFrom(const char* piece, size_t from, size_t to, uint64_t at);

  Mode mode_;
  Sink onValue_;
  Sink onMetadata_;

  // Lexical state.
  uint64_t offset_ = 0;
  int depth_ = 0;
  bool inString_ = false;
  bool escape_ = false;
  bool inScalar_ = false;  // inside a number / literal at capture depth
  // Capture of the current value of interest.
  bool capturing_ = false;
  int captureDepth_ = 0;  // depth at which the captured value started
  const Sink* captureSink_ = nullptr;
  std::string capture_;
  // ListItems: the key at depth 1 and whether the next string at depth 1 is a key.
  bool expectKey_ = false;
  bool readingKey_ = false;
  std::string key_;
  bool inItems_ = false;
  bool topClosed_ = false;
  bool failed_ = false;
  std::string error_;
};

}  // namespace placer::kube
