// libFuzzer target: a watch stream's body (concatenated watch events) framed
// by the production scanner (scoring/json_stream_scanner.h, TopLevelValues),
// each event read by readWatchEvent (webhook/kube/watch_bodies.h) as the
// watcher reads it, and its object decoded as a node and as a pod and applied
// to a view; then one decision on that view.
//
// What must hold: the body framed whole and framed in pieces gives the same
// events and the same error; a malformed event ends the stream with a
// message; decoding and applying never crash, and the decision names a node
// of the view.

#include "test/fuzz/stream_support.h"
#include "webhook/kube/watch_bodies.h"

using namespace placer;
using namespace placer::fuzz;

extern "C" int LLVMFuzzerInitialize(int*, char***) { return prepareTarget(); }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = asText(data, size);
  MutableClusterView view;
  // As ListWatcher::watch: a malformed event, or an ERROR, ends the stream.
  // `into` null: only framed and read (the pieces' run).
  auto acceptInto = [](JsonParser& parser, MutableClusterView* into) {
    return [&parser, into](std::string_view bytes) -> Outcome {
      auto event = kube::readWatchEvent(parser, bytes);
      if (!event) {
        FUZZ_CHECK(!event.error().message.empty(), "a malformed event says why");
        return event.error();
      }
      switch (event->type) {
        case kube::WatchEvent::Type::Expired: return Error{"resourceVersion expired"};
        case kube::WatchEvent::Type::Failed: return Error{"watch ERROR event: " + event->message};
        case kube::WatchEvent::Type::Upserted:
          if (into) apply(*into, event->object, false);
          break;
        case kube::WatchEvent::Type::Deleted:
          if (into) apply(*into, event->object, true);
          break;
        case kube::WatchEvent::Type::Bookmark:
        case kube::WatchEvent::Type::Unknown: break;
      }
      return {};
    };
  };
  JsonParser wholeParser, cutParser;
  const Framed whole = frame(JsonStreamScanner::Mode::TopLevelValues, {text}, acceptInto(wholeParser, &view));
  const Framed cut = frame(JsonStreamScanner::Mode::TopLevelValues, pieces(text), acceptInto(cutParser, nullptr));
  checkSameFraming(whole, cut, text);
  decideOn(view);
  return 0;
}
