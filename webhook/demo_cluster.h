#pragma once
// The built-in example cluster of `placer serve --demo`: a few dozen varied
// nodes in three zones — general-purpose nodes of three sizes (amd64 and
// arm64), a tainted high-memory pool, a tainted GPU pool, control-plane nodes,
// a cordoned node — and some pods already bound to them. Objects are written
// as the API server serves them and go through the same decoding as live ones.

#include <nlohmann/json.hpp>

namespace placer {

// A snapshot (DESIGN.md): {"nodes": [...], "pods": [...]}.
nlohmann::json demoSnapshot();

// An AdmissionReview as the API server sends it for `kubectl create` of a
// Deployment's pod in namespace "demo": generateName, no name, no uid, no
// nodeName. Placing it on the demo cluster assigns a node.
nlohmann::json demoAdmissionReview();

// The extender's ExtenderArgs for the same pod once it exists (a name and a
// uid) and has been left to kube-scheduler: NodeNames lists every demo node,
// as a scheduler with nodeCacheCapable sends them.
nlohmann::json demoExtenderArgs();

}  // namespace placer
