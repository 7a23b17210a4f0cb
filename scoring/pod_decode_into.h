#pragma once
// Decoding a pod into an object that held an earlier one, for the list path
// (webhook/kube/kube_feed.cpp's batches), where ~150,000 pods are decoded one
// after the other into a few hundred objects that are reused.
//
// Thread-safety: none of its own; one thread per Pod at a time.

#include "scoring/json_value.h"
#include "scoring/model.h"
#include "scoring/result.h"

namespace placer {

// decodePod into `pod`, replacing whatever it held: its strings and lists
// keep their capacity, so that decoding a pod like the one before it
// allocates (almost) nothing. A success leaves `pod` equal to decodePod's
// result; an error is decodePod's error, and leaves `pod` holding part of a
// decode: only decode into it again.
Outcome decodePodInto(const JsonValue& object, Pod& pod);

}  // namespace placer
