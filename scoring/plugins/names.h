#pragma once
// Plugin names, exactly as kube-scheduler spells them (plugins/names/names.go).

#include <string_view>

namespace placer::names {

inline constexpr std::string_view kNodeUnschedulable = "NodeUnschedulable";
inline constexpr std::string_view kNodeName = "NodeName";
inline constexpr std::string_view kTaintToleration = "TaintToleration";
inline constexpr std::string_view kNodeAffinity = "NodeAffinity";
inline constexpr std::string_view kNodePorts = "NodePorts";
inline constexpr std::string_view kNodeResourcesFit = "NodeResourcesFit";
inline constexpr std::string_view kNodeResourcesBalancedAllocation = "NodeResourcesBalancedAllocation";
inline constexpr std::string_view kImageLocality = "ImageLocality";
inline constexpr std::string_view kPodTopologySpread = "PodTopologySpread";
inline constexpr std::string_view kInterPodAffinity = "InterPodAffinity";
inline constexpr std::string_view kLabelPriority = "LabelPriority";  // placer's own

}  // namespace placer::names
