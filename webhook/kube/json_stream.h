#pragma once
// Decoding parts of API server bodies without building them whole: the
// filtered parser that keeps only the fields a FieldFilter lists (skipped
// fields such as managedFields, probes, env are stepped over without being
// built), and raw splitters of one object's members or one array's elements.
// Bodies that stream in pieces (list pages, watch streams) are split by
// scoring/json_stream_scanner.h.
//
// Measured against a full nlohmann DOM parse in test/bench/watch_decode_bench.cpp.
// Thread-safety: none; each call stands alone.

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

}  // namespace placer::kube
