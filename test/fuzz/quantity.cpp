// libFuzzer target: resource.Quantity text through parseQuantity and
// parseMilliQuantity (scoring/quantity.h), as every resource list is read.
//
// What must hold for a quantity that parses (both round away from zero, as
// Quantity.Value() and MilliValue() do: "round up" in apimachinery's words,
// negativeScaleInt64 for negative amounts):
//  - its value written as a plain integer parses back to the same value, and
//    its milli-value written as "<n>m" parses back to the same milli-value;
//  - milli / 1000 rounded away from zero is the value (rounding 1000x away
//    from zero, then dividing by 1000 and rounding again, is rounding x);
//  - a text that does not parse gets an error message.

#include <string>

#include "scoring/quantity.h"
#include "test/fuzz/fuzz_support.h"

using namespace placer;
using namespace placer::fuzz;

namespace {

int64_t divide1000AwayFromZero(int64_t milli) {
  int64_t q = milli / 1000;  // toward zero
  if (milli % 1000 != 0) q += milli > 0 ? 1 : -1;
  return q;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = asText(data, size);
  auto value = parseQuantity(text);
  auto milli = parseMilliQuantity(text);
  const std::string input(text);
  if (!value) FUZZ_CHECK(!value.error().message.empty(), input);
  if (!milli) FUZZ_CHECK(!milli.error().message.empty(), input);
  if (value) {
    auto again = parseQuantity(std::to_string(*value));
    FUZZ_CHECK(again && *again == *value, input + " -> " + std::to_string(*value));
  }
  if (milli) {
    auto again = parseMilliQuantity(std::to_string(*milli) + "m");
    FUZZ_CHECK(again && *again == *milli, input + " -> " + std::to_string(*milli) + "m");
    // Whatever fits in thousandths fits in units.
    FUZZ_CHECK(value.ok(), input);
    FUZZ_CHECK(divide1000AwayFromZero(*milli) == *value,
               input + ": milli " + std::to_string(*milli) + ", value " + std::to_string(*value));
  }
  return 0;
}
