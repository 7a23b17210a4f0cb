#include "scoring/yaml.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <yaml.h>

namespace placer {
namespace {

using json = nlohmann::json;

constexpr int kMaxDepth = 256;


// ---- plain scalar typing, as go-yaml v2 resolves it for sigs.k8s.io/yaml ----

bool allDigits(std::string_view s, int base) {
  if (s.empty()) return false;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return false;
    if (d >= base) return false;
  }
  return true;
}

// strconv.ParseInt/ParseUint with base 0: optional sign, then 0x / 0o / 0b /
// leading-0 octal / decimal. Returns the magnitude and sign.
bool parseGoInteger(std::string_view s, bool& negative, uint64_t& magnitude) {
  negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
    base = 8;
    s.remove_prefix(2);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
    base = 2;
    s.remove_prefix(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8;
    s.remove_prefix(1);
  }
  if (!allDigits(s, base)) return false;
  magnitude = 0;
  for (char c : s) {
    const uint64_t d = (c <= '9') ? c - '0' : ((c | 0x20) - 'a' + 10);
    if (magnitude > (std::numeric_limits<uint64_t>::max() - d) / base) return false;
    magnitude = magnitude * base + d;
  }
  return true;
}

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ (go-yaml's yamlStyleFloat).
bool isYamlFloat(std::string_view s) {
  size_t i = 0;
  auto digits = [&]() {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  } else {
    if (!digits()) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

// A float as JSON would carry it after Go's json.Marshal: integral values
// print without a fraction and so read back as integers.
json floatValue(double d) {
  if (std::trunc(d) == d && std::fabs(d) < 1e21) {
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return json(static_cast<int64_t>(d));
    if (d >= 0 && d < 18446744073709551616.0) return json(static_cast<uint64_t>(d));
  }
  return json(d);
}

struct Resolved {
  json value;
  std::string error;  // non-empty: not representable in JSON
};

Resolved resolved(json value) { return Resolved{std::move(value), std::string()}; }

Resolved resolvePlain(const std::string& in) {
  Resolved r;
  if (in.empty() || in == "~" || in == "null" || in == "Null" || in == "NULL") return r;
  static constexpr std::string_view kTrue[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"};
  static constexpr std::string_view kFalse[] = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"};
  for (std::string_view t : kTrue)
    if (in == t) return resolved(json(true));
  for (std::string_view f : kFalse)
    if (in == f) return resolved(json(false));
  static constexpr std::string_view kSpecialFloats[] = {".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF",
                                                        "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"};
  for (std::string_view f : kSpecialFloats)
    if (in == f) return Resolved{json(), "\"" + in + "\" (infinity or NaN) cannot be represented in JSON"};

  const char first = in[0];
  if (first == '.') {
    if (isYamlFloat(in)) return resolved(floatValue(std::strtod(in.c_str(), nullptr)));
  } else if ((first >= '0' && first <= '9') || first == '+' || first == '-') {
    std::string plain;
    plain.reserve(in.size());
    for (char c : in)
      if (c != '_') plain += c;
    bool negative = false;
    uint64_t magnitude = 0;
    if (parseGoInteger(plain, negative, magnitude)) {
      if (!negative && magnitude <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return resolved(json(static_cast<int64_t>(magnitude)));
      if (!negative) return resolved(json(magnitude));
      if (magnitude <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1)
        return resolved(json(static_cast<int64_t>(0 - magnitude)));
    }
    if (isYamlFloat(plain)) {
      errno = 0;
      const double d = std::strtod(plain.c_str(), nullptr);
      if (errno != ERANGE) return resolved(floatValue(d));
    }
  }
  r.value = json(in);
  return r;
}

// JSON keys are strings; sigs.k8s.io/yaml formats resolved non-string keys.
std::string keyString(const std::string& raw, bool quoted) {
  if (quoted) return raw;
  Resolved r = resolvePlain(raw);
  if (r.value.is_null() && r.error.empty()) return "null";
  if (r.value.is_boolean()) return r.value.get<bool>() ? "true" : "false";
  if (r.value.is_number_integer()) return r.value.dump();
  return raw;
}

// ---- the document, built from libyaml's events ----
//
// libyaml is the C reference parser of which go-yaml (behind sigs.k8s.io/yaml)
// is a port: it decides the structure, block and flow styles, quoting,
// escapes and block scalars. What is ours is what sigs.k8s.io/yaml then does
// with it: resolving plain scalars as go-yaml v2 does, keys as JSON strings,
// only the first document, and refusing what JSON cannot carry.

std::string at(const yaml_mark_t& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

Error failAt(const yaml_mark_t& mark, std::string_view what) {
  std::string m = at(mark);
  m.append(": ").append(what);
  return Error{std::move(m)};
}

// libyaml's own message: the problem where it was found, and what was being
// parsed, from where.
Error parserError(const yaml_parser_t& parser) {
  std::string m = at(parser.problem_mark);
  m.append(": ").append(parser.problem != nullptr ? parser.problem : "invalid YAML");
  if (parser.context != nullptr) {
    m.append(" (").append(parser.context);
    m.append(" that started at ").append(at(parser.context_mark)).append(")");
  }
  return Error{std::move(m)};
}

class DocumentBuilder {
 public:
  DocumentBuilder() { yaml_parser_initialize(&parser_); }
  ~DocumentBuilder() { yaml_parser_delete(&parser_); }
  DocumentBuilder(const DocumentBuilder&) = delete;
  DocumentBuilder& operator=(const DocumentBuilder&) = delete;

  // The first document of `text` (null when there is none).
  Result<json> firstDocument(const std::string& text) {
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()), text.size());
    yaml_parser_set_encoding(&parser_, YAML_UTF8_ENCODING);
    while (true) {
      yaml_event_t event;
      if (!yaml_parser_parse(&parser_, &event)) return parserError(parser_);
      std::optional<Error> error = apply(event);
      const yaml_event_type_t type = event.type;
      yaml_event_delete(&event);
      if (error) return std::move(*error);
      if (type == YAML_DOCUMENT_END_EVENT || type == YAML_STREAM_END_EVENT) break;
    }
    return std::move(document_);
  }

 private:
  struct Frame {
    json value;          // an object or an array
    bool mapping = false;
    bool haveKey = false;
    std::string key;
  };

  std::optional<Error> apply(const yaml_event_t& event) {
    switch (event.type) {
      case YAML_MAPPING_START_EVENT:
      case YAML_SEQUENCE_START_EVENT: {
        const bool mapping = event.type == YAML_MAPPING_START_EVENT;
        const auto& d = event.data;
        const bool anchored = mapping ? d.mapping_start.anchor != nullptr : d.sequence_start.anchor != nullptr;
        const bool tagged = mapping ? (d.mapping_start.tag != nullptr && !d.mapping_start.implicit)
                                    : (d.sequence_start.tag != nullptr && !d.sequence_start.implicit);
        if (anchored) return failAt(event.start_mark, "anchors and aliases are not supported");
        if (tagged) return failAt(event.start_mark, "tags are not supported");
        if (stack_.size() >= static_cast<size_t>(kMaxDepth))
          return failAt(event.start_mark, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
        if (!stack_.empty() && stack_.back().mapping && !stack_.back().haveKey)
          return failAt(event.start_mark, "a mapping key must be a scalar");
        Frame frame;
        frame.mapping = mapping;
        frame.value = mapping ? json::object() : json::array();
        stack_.push_back(std::move(frame));
        return std::nullopt;
      }
      case YAML_MAPPING_END_EVENT:
      case YAML_SEQUENCE_END_EVENT: {
        json value = std::move(stack_.back().value);
        stack_.pop_back();
        return place(std::move(value), event.start_mark);
      }
      case YAML_SCALAR_EVENT:
        return scalar(event);
      case YAML_ALIAS_EVENT:
        return failAt(event.start_mark, "anchors and aliases are not supported");
      default:  // stream and document start and end
        return std::nullopt;
    }
  }

  std::optional<Error> scalar(const yaml_event_t& event) {
    const auto& d = event.data.scalar;
    if (d.anchor != nullptr) return failAt(event.start_mark, "anchors and aliases are not supported");
    if (d.tag != nullptr && !d.plain_implicit && !d.quoted_implicit)
      return failAt(event.start_mark, "tags are not supported");
    std::string text(reinterpret_cast<const char*>(d.value), d.length);
    const bool plain = d.style == YAML_PLAIN_SCALAR_STYLE;
    if (!stack_.empty() && stack_.back().mapping && !stack_.back().haveKey) {
      Frame& frame = stack_.back();
      if (plain && text == "<<") return failAt(event.start_mark, "merge keys are not supported");
      frame.key = keyString(text, !plain);
      if (frame.value.contains(frame.key)) return failAt(event.start_mark, "duplicate key \"" + frame.key + "\"");
      frame.haveKey = true;
      return std::nullopt;
    }
    if (!plain) return place(json(std::move(text)), event.start_mark);
    Resolved r = resolvePlain(text);
    if (!r.error.empty()) return failAt(event.start_mark, r.error);
    return place(std::move(r.value), event.start_mark);
  }

  // A finished value goes into the collection being built, or is the document.
  std::optional<Error> place(json value, const yaml_mark_t&) {
    if (stack_.empty()) {
      document_ = std::move(value);
      return std::nullopt;
    }
    Frame& parent = stack_.back();
    if (!parent.mapping) {
      parent.value.push_back(std::move(value));
    } else {
      parent.value[parent.key] = std::move(value);
      parent.haveKey = false;
    }
    return std::nullopt;
  }

  yaml_parser_t parser_;
  std::vector<Frame> stack_;
  json document_;
};

// Well-formed UTF-8 (nlohmann refuses to serialise anything else).
std::optional<size_t> firstInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c >> 5) == 0x6) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c >> 4) == 0xE) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c >> 3) == 0x1E) {
      n = 3;
      cp = c & 0x07;
    } else {
      return i;
    }
    for (size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return i;
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return i;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return i;
    i += n + 1;
  }
  return std::nullopt;
}

// "line L, column C" of byte `index` of `text`.
std::string position(std::string_view text, size_t index) {
  yaml_mark_t mark{};
  for (size_t i = 0; i < index; ++i) {
    if (text[i] == '\n') {
      ++mark.line;
      mark.column = 0;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++mark.column;
    }
  }
  return at(mark);
}

}  // namespace

Result<nlohmann::json> parseYaml(std::string_view text) {
  if (auto bad = firstInvalidUtf8(text)) return Error{position(text, *bad) + ": invalid UTF-8"};
  // NUL bytes are not valid YAML characters (and would end libyaml's input).
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
    return Error{position(text, nul) + ": NUL character in YAML"};
  const std::string normalised(text);
  try {
    DocumentBuilder builder;
    return builder.firstDocument(normalised);
  } catch (const std::exception& e) {
    // Allocation failure or a json type error: never escape the boundary.
    return Error{std::string("invalid YAML: ") + e.what()};
  }
}

}  // namespace placer
