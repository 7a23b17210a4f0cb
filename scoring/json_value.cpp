#include "scoring/json_value.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "scoring/model.h"
#include "scoring/model_decode.h"
#include "scoring/pod_decode_into.h"

namespace placer {

namespace dom = simdjson::dom;
using model_decode::JsonKind;

static_assert(JsonParser::kPadding >= simdjson::SIMDJSON_PADDING);

struct JsonValueAccess {
  static_assert(sizeof(dom::element) == sizeof(JsonValue::element_) && std::is_trivially_copyable_v<dom::element>,
                "JsonValue holds a simdjson::dom::element by value");
  static dom::element element(const JsonValue& v) {
    dom::element e;
    std::memcpy(static_cast<void*>(&e), v.element_, sizeof e);
    return e;
  }
  static JsonValue make(dom::element e) {
    JsonValue v;
    std::memcpy(v.element_, static_cast<const void*>(&e), sizeof e);
    return v;
  }
};

namespace {

// Keys differ mostly in their length or first byte: those are compared
// before any call to memcmp (and a key compared with itself is not read).
bool sameKey(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.data() == b.data() || a.empty() || (a[0] == b[0] && a == b));
}

// The last member of `key`, nullopt when absent or null (model_decode.h's contract).
std::optional<dom::element> lastMember(dom::element object, std::string_view key) {
  std::optional<dom::element> found;
  const dom::object fields = object.get_object().value_unsafe();
  for (dom::key_value_pair field : fields)
    if (sameKey(field.key, key)) found = field.value;
  if (found && found->type() == dom::element_type::NULL_VALUE) return std::nullopt;
  return found;
}

// model_decode.h's view of a simdjson DOM value.
class DomValue {
 public:
  explicit DomValue(dom::element e) : e_(e) {}

  // An object's members of some keys, found in one walk (picking()).
  struct Picks {
    std::span<const std::string_view> keys;
    uint32_t found = 0;  // bit i: keys[i] is present (its last value in values[i])
    dom::element values[model_decode::kMaxPicked];
  };
  DomValue picking(std::span<const std::string_view> keys, Picks& picks) const {
    picks.keys = keys.first(std::min(keys.size(), model_decode::kMaxPicked));
    picks.found = 0;
    uint64_t lengths = 0;  // bit n: some key is n bytes long (keys under 64 bytes)
    for (std::string_view key : picks.keys) lengths |= key.size() < 64 ? uint64_t(1) << key.size() : 0;
    const dom::object fields = e_.get_object().value_unsafe();
    for (dom::key_value_pair field : fields) {
      const size_t size = field.key.size();
      if (size >= 64 || !(lengths >> size & 1)) continue;
      for (size_t i = 0; i < picks.keys.size(); ++i) {
        if (!sameKey(picks.keys[i], field.key)) continue;
        picks.values[i] = field.value;  // a later duplicate replaces it
        picks.found |= uint32_t(1) << i;
        break;
      }
    }
    DomValue picked(e_);
    picked.picks_ = &picks;
    return picked;
  }

  JsonKind kind() const {
    switch (e_.type()) {
      case dom::element_type::OBJECT: return JsonKind::Object;
      case dom::element_type::ARRAY: return JsonKind::Array;
      case dom::element_type::STRING: return JsonKind::String;
      case dom::element_type::BOOL: return JsonKind::Bool;
      case dom::element_type::INT64: return JsonKind::Signed;
      case dom::element_type::UINT64: return JsonKind::Unsigned;
      case dom::element_type::DOUBLE: return JsonKind::Float;
      case dom::element_type::NULL_VALUE: return JsonKind::Null;
    }
    return JsonKind::Null;
  }
  std::optional<DomValue> member(std::string_view key) const {
    if (picks_ != nullptr)
      for (size_t i = 0; i < picks_->keys.size(); ++i) {
        const std::string_view picked = picks_->keys[i];
        if (!sameKey(picked, key)) continue;
        if (!(picks_->found >> i & 1) || picks_->values[i].type() == dom::element_type::NULL_VALUE)
          return std::nullopt;  // absent or null, as lastMember answers
        return DomValue(picks_->values[i]);
      }
    auto found = lastMember(e_, key);
    if (!found) return std::nullopt;
    return DomValue(*found);
  }
  std::string_view string() const { return e_.get_string().value_unsafe(); }
  bool boolean() const { return e_.get_bool().value_unsafe(); }
  int64_t int64() const { return e_.get_int64().value_unsafe(); }
  uint64_t uint64() const { return e_.get_uint64().value_unsafe(); }
  double float64() const { return e_.get_double().value_unsafe(); }
  // As nlohmann writes the number it would have parsed from the same text.
  std::string numberText() const {
    switch (e_.type()) {
      case dom::element_type::INT64: return nlohmann::json(int64()).dump();
      case dom::element_type::UINT64: return nlohmann::json(uint64()).dump();
      default: return nlohmann::json(float64()).dump();
    }
  }
  size_t size() const {
    if (e_.type() == dom::element_type::ARRAY) return e_.get_array().value_unsafe().size();
    return e_.get_object().value_unsafe().size();
  }

  model_decode::ElementRange<DomValue, dom::array::iterator> elements() const {
    const dom::array array = e_.get_array().value_unsafe();
    return {array.begin(), array.end()};
  }

  // Sorted by key, each key once with its last value, as nlohmann iterates.
  // Go writes maps sorted, so the members usually come in that order already.
  template <class F>
  Outcome forEachMember(F&& f) const {
    const dom::object object = e_.get_object().value_unsafe();
    bool ordered = true;
    std::string_view previous;
    bool first = true;
    for (dom::key_value_pair field : object) {
      if (!first && !(previous < field.key)) {
        ordered = false;
        break;
      }
      previous = field.key;
      first = false;
    }
    if (ordered) {
      for (dom::key_value_pair field : object)
        if (auto o = f(field.key, DomValue(field.value)); !o) return o;
      return {};
    }
    std::vector<std::pair<std::string_view, dom::element>> fields;
    fields.reserve(object.size());
    for (dom::key_value_pair field : object) fields.emplace_back(field.key, field.value);
    std::stable_sort(fields.begin(), fields.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i + 1 < fields.size() && fields[i + 1].first == fields[i].first) continue;  // a later duplicate wins
      if (auto o = f(fields[i].first, DomValue(fields[i].second)); !o) return o;
    }
    return {};
  }

 private:
  dom::element e_;
  const Picks* picks_ = nullptr;  // picking(): member() answers for its keys
};

DomValue view(const JsonValue& v) { return DomValue(JsonValueAccess::element(v)); }

}  // namespace

bool JsonValue::isObject() const { return JsonValueAccess::element(*this).type() == dom::element_type::OBJECT; }

std::optional<JsonValue> JsonValue::member(std::string_view key) const {
  const dom::element e = JsonValueAccess::element(*this);
  if (e.type() != dom::element_type::OBJECT) return std::nullopt;
  auto found = lastMember(e, key);
  if (!found) return std::nullopt;
  return JsonValueAccess::make(*found);
}

std::optional<std::string_view> JsonValue::string() const {
  const dom::element e = JsonValueAccess::element(*this);
  if (e.type() != dom::element_type::STRING) return std::nullopt;
  return e.get_string().value_unsafe();
}

std::optional<bool> JsonValue::boolean() const {
  const dom::element e = JsonValueAccess::element(*this);
  if (e.type() != dom::element_type::BOOL) return std::nullopt;
  return e.get_bool().value_unsafe();
}

std::optional<int64_t> JsonValue::integer() const {
  const dom::element e = JsonValueAccess::element(*this);
  if (e.type() != dom::element_type::INT64) return std::nullopt;
  return e.get_int64().value_unsafe();
}

std::string JsonValue::text() const { return simdjson::minify(JsonValueAccess::element(*this)); }

struct JsonParser::Impl {
  dom::parser parser;
};

JsonParser::JsonParser() : impl_(std::make_unique<Impl>()) {}
JsonParser::~JsonParser() = default;

Result<JsonValue> JsonParser::parse(std::string_view bytes, bool padded) {
  // Unpadded input is copied into the parser's own padded buffer (kept between calls).
  auto result = impl_->parser.parse(bytes.data(), bytes.size(), !padded);
  if (result.error()) return Error{std::string("malformed JSON: ") + simdjson::error_message(result.error())};
  return JsonValueAccess::make(result.value_unsafe());
}

JsonParser& threadParserFor(size_t bytes, std::optional<JsonParser>& own) {
  // ~14 bytes of parser per document byte are kept: at most ~1 MB per thread.
  constexpr size_t kReuseBelow = 64 * 1024;
  thread_local JsonParser reused;
  return bytes < kReuseBelow ? reused : own.emplace();
}

Result<Pod> decodePod(const JsonValue& object) { return model_decode::decodePodAs(view(object)); }
Outcome decodePodInto(const JsonValue& object, Pod& pod) { return model_decode::decodePodInto(view(object), pod); }
Result<Node> decodeNode(const JsonValue& object) { return model_decode::decodeNodeAs(view(object)); }
Result<Namespace> decodeNamespace(const JsonValue& object) { return model_decode::decodeNamespaceAs(view(object)); }
Result<WorkloadSelector> decodeWorkloadSelector(WorkloadKind kind, const JsonValue& object) {
  return model_decode::decodeWorkloadSelectorAs(kind, view(object));
}

}  // namespace placer
