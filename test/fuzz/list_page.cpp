// libFuzzer target: a list page's body (a v1.NodeList or v1.PodList) framed
// by the production scanner (scoring/json_stream_scanner.h, ListItems), its
// metadata read by readListMetadata (webhook/kube/watch_bodies.h) and each
// item parsed (scoring/json_value.h) and decoded as a node and as a pod, as
// ListWatcher::list and the feed's handlers do, inside a resync of the view;
// then one decision on that view.
//
// What must hold: the page framed whole and in pieces gives the same items,
// metadata and error; a malformed item or metadata ends the page with a
// message; decoding and applying never crash; a pod decoded over the item
// before it (decodePodInto, as the list path reuses its pods) equals a fresh
// decode, or fails with the same error; the decision names a node of the view.

#include "test/fuzz/stream_support.h"
#include "scoring/pod_decode_into.h"
#include "webhook/kube/watch_bodies.h"

using namespace placer;
using namespace placer::fuzz;

extern "C" int LLVMFuzzerInitialize(int*, char***) { return prepareTarget(); }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = asText(data, size);
  const Framed whole = frame(JsonStreamScanner::Mode::ListItems, {text});
  checkSameFraming(whole, frame(JsonStreamScanner::Mode::ListItems, pieces(text)), text);

  for (const std::string& meta : whole.metadata) {
    auto read = kube::readListMetadata(meta);
    if (!read) FUZZ_CHECK(!read.error().message.empty(), meta);
  }
  MutableClusterView view;
  view.beginResync(ResyncKind::Nodes);
  view.beginResync(ResyncKind::Pods);
  JsonParser parser;
  Pod reused;  // each item decoded over the one before, as the pods' list batches do
  for (const std::string& item : whole.values) {
    auto object = parser.parse(item);
    if (!object) {
      FUZZ_CHECK(!object.error().message.empty(), item);
      break;  // the list is not usable (ListDecoder stops at the first bad item)
    }
    apply(view, *object, false);
    const Outcome into = decodePodInto(*object, reused);
    const Result<Pod> fresh = decodePod(*object);
    FUZZ_CHECK(into.ok() == fresh.ok(), item);
    if (fresh.ok())
      FUZZ_CHECK(reused == *fresh, "decoded over its predecessor, a pod differs from a fresh decode: " + item);
    else
      FUZZ_CHECK(into.error().message == fresh.error().message, item);
  }
  if (!whole.error) {
    view.finishResync(ResyncKind::Nodes);
    view.finishResync(ResyncKind::Pods);
  }
  decideOn(view);
  return 0;
}
