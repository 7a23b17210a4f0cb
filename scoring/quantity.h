#pragma once
// Kubernetes resource.Quantity: "100m", "0.5", "1e3", "2Gi", "1500Mi", "1.5G", "12E", "+1", ".5".
// Semantics follow k8s.io/apimachinery/pkg/api/resource: values round *up* when
// scaled to an integer (Value() and MilliValue() both use ceiling).

#include <cstdint>
#include <string_view>

#include "scoring/result.h"

namespace placer {

// The quantity in whole units, rounded up (resource.Quantity.Value()).
// Errors on syntax and on values that do not fit in int64.
Result<int64_t> parseQuantity(std::string_view text);

// The quantity in thousandths, rounded up (resource.Quantity.MilliValue()): cpu.
Result<int64_t> parseMilliQuantity(std::string_view text);

}  // namespace placer
