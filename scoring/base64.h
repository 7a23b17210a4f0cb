#pragma once
// Base64 as Go's encoding/base64.StdEncoding has it: the alphabet with "+/",
// "=" padding; decoding ignores "\r" and "\n" (as Go's decoder does) and is
// otherwise strict. Every []byte field of a Kubernetes object (a Secret's
// data, a caBundle, an AdmissionReview's patch, a kubeconfig's *-data) is this.
// Part of placer_common: standard C++ only.

#include <string>
#include <string_view>

#include "scoring/result.h"

namespace placer {

std::string base64Encode(std::string_view bytes);

// Go's error on bad input, offset included: "illegal base64 data at input
// byte N".
Result<std::string> base64Decode(std::string_view text);

}  // namespace placer
