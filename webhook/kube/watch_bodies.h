#pragma once
// What ListWatcher reads from the bodies the API server streams, as pure
// functions of their bytes (no connection, no handler), so that the fuzz
// targets in test/fuzz call exactly what the watcher calls:
//  - a list page's "metadata" (its continue token and resourceVersion);
//  - one watch event (a top-level value of a watch stream, framed by
//    scoring/json_stream_scanner.h): its type, its object, and for an ERROR
//    event whether it says the resourceVersion expired (code 410).
//
// Thread-safety: none; each call stands alone (the event's object lives in the
// caller's parser).

#include <string>
#include <string_view>

#include "scoring/json_value.h"
#include "scoring/result.h"

namespace placer::kube {

struct ListPageMetadata {
  std::string continueToken;    // empty: the last page
  std::string resourceVersion;  // empty when the page carries none
};
// A list's "metadata" object; an error when it is not a JSON object.
Result<ListPageMetadata> readListMetadata(std::string_view bytes);

struct WatchEvent {
  enum class Type : uint8_t {
    Upserted,  // ADDED or MODIFIED
    Deleted,
    Bookmark,
    Expired,   // ERROR with code 410: relist
    Failed,    // any other ERROR; `message` says why
    Unknown,   // a type this client does not know: skipped
  };
  Type type;
  JsonValue object;             // valid until `parser` parses again
  std::string message;          // Failed: the Status message (or the object's text)
  std::string resourceVersion;  // object.metadata.resourceVersion, empty when absent
};
// One event; an error when it is not an object with a string "type" and an
// object "object" (a malformed event, which ends the stream).
Result<WatchEvent> readWatchEvent(JsonParser& parser, std::string_view bytes);

}  // namespace placer::kube
