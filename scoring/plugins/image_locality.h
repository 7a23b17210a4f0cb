#pragma once
// ImageLocality (kube-scheduler plugins/imagelocality).
//
// Score: for every container and init container of the pod whose image
// (normalizedImageName) the node already holds, the image size scaled by its
// spread, size * (nodes holding the image / all nodes); the sum is clamped to
// [23 MiB, 1000 MiB * number of containers] and mapped linearly onto 0-100.
// No NormalizeScore. PreScore looks the images up once per decision and
// returns Skip when no node holds any of them (every node then scores 0).
// No args.

#include <cstdint>
#include <memory>

#include <nlohmann/json_fwd.hpp>

#include "scoring/framework.h"
#include "scoring/result.h"

namespace placer {

inline constexpr int64_t kImageLocalityMinThreshold = 23LL * 1024 * 1024;
inline constexpr int64_t kImageLocalityMaxContainerThreshold = 1000LL * 1024 * 1024;

// calculatePriority: sumScores clamped and scaled onto 0-100.
int64_t imageLocalityPriority(int64_t sumScores, int64_t numContainers);

Result<std::unique_ptr<Plugin>> newImageLocality(const nlohmann::json& args);

}  // namespace placer
