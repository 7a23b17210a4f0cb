#include "scoring/yaml.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace placer {
namespace {

using json = nlohmann::json;

constexpr int kMaxDepth = 256;

bool isBlank(char c) { return c == ' ' || c == '\t'; }
bool isBreakOrEnd(char c) { return c == '\n' || c == '\0'; }
bool isFlowIndicator(char c) { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}'; }

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

// ---- the parser ----

class Parser {
 public:
  explicit Parser(std::string text) : s_(std::move(text)) {}

  Result<json> parseFirstDocument() {
    skipPrologue();
    auto next = nextContent(pos_);
    if (next.end) return json();
    auto value = parseNode(-1, Context::Document);
    if (!value) return value;
    auto after = nextContent(pos_);
    if (!after.end) return fail(after.pos, "unexpected content after the document");
    return value;
  }

 private:
  enum class Context { Document, MapValue, SeqEntry };

  struct Content {
    size_t pos = 0;
    int col = 0;
    bool end = true;  // end of input or a document marker
  };

  std::string s_;
  size_t pos_ = 0;
  int depth_ = 0;

  char at(size_t p) const { return p < s_.size() ? s_[p] : '\0'; }
  char cur() const { return at(pos_); }

  size_t lineStart(size_t p) const {
    size_t nl = s_.rfind('\n', p == 0 ? 0 : p - 1);
    if (p == 0) return 0;
    return nl == std::string::npos ? 0 : nl + 1;
  }
  int column(size_t p) const { return static_cast<int>(p - lineStart(p)); }
  int lineNumber(size_t p) const {
    int line = 1;
    for (size_t i = 0; i < p && i < s_.size(); ++i)
      if (s_[i] == '\n') ++line;
    return line;
  }

  Error fail(size_t p, std::string_view what) const {
    std::string m = "line " + std::to_string(lineNumber(p)) + ": ";
    m.append(what);
    return Error{std::move(m)};
  }

  bool isDocumentMarker(size_t p) const {
    if ((p != 0 && s_[p - 1] != '\n') || p + 3 > s_.size()) return false;
    const std::string_view three(s_.data() + p, 3);
    if (three != "---" && three != "...") return false;
    const char after = at(p + 3);
    return isBreakOrEnd(after) || isBlank(after);
  }

  // Directives, comments and the first "---".
  void skipPrologue() {
    if (s_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;
    while (true) {
      auto next = nextContent(pos_);
      if (next.pos >= s_.size()) return;
      if (column(next.pos) == 0 && at(next.pos) == '%') {
        pos_ = s_.find('\n', next.pos);
        if (pos_ == std::string::npos) pos_ = s_.size();
        continue;
      }
      if (isDocumentMarker(next.pos) && s_.compare(next.pos, 3, "---") == 0) pos_ = next.pos + 3;
      return;
    }
  }

  // The next non-blank, non-comment character from p, crossing lines.
  Content nextContent(size_t p) const {
    while (p < s_.size()) {
      const char c = s_[p];
      if (isBlank(c) || c == '\n') {
        ++p;
      } else if (c == '#') {
        while (p < s_.size() && s_[p] != '\n') ++p;
      } else {
        break;
      }
    }
    Content c;
    c.pos = p;
    if (p >= s_.size()) return c;
    c.col = column(p);
    c.end = isDocumentMarker(p);
    return c;
  }

  // True when the rest of the current line from p is blank or a comment.
  bool restOfLineEmpty(size_t p) const {
    while (p < s_.size() && isBlank(s_[p])) ++p;
    return p >= s_.size() || s_[p] == '\n' || s_[p] == '#';
  }

  bool indentationHasTab(size_t contentPos) const {
    for (size_t i = lineStart(contentPos); i < contentPos; ++i)
      if (s_[i] == '\t') return true;
    return false;
  }

  bool isSequenceEntry(size_t p) const {
    return at(p) == '-' && (isBlank(at(p + 1)) || isBreakOrEnd(at(p + 1)));
  }

  struct DepthGuard {
    int& depth;
    explicit DepthGuard(int& d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
  };

  // A node after "key:", after "- ", or at the top. parentIndent is the
  // indentation of the enclosing block collection (-1 at the top).
  Result<json> parseNode(int parentIndent, Context ctx) {
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) return fail(pos_, "nesting too deep");
    while (isBlank(cur())) ++pos_;
    if (restOfLineEmpty(pos_)) {
      // The value starts on a later line (or is empty).
      Content next = nextContent(pos_);
      if (next.end) {
        pos_ = next.pos;
        return json();
      }
      if (indentationHasTab(next.pos)) return fail(next.pos, "tabs are not allowed in indentation");
      if (next.col > parentIndent ||
          (ctx == Context::MapValue && next.col == parentIndent && isSequenceEntry(next.pos))) {
        pos_ = next.pos;
        return parseBlockAt(parentIndent, next.col, true);
      }
      return json();  // empty value; the line belongs to an outer level
    }
    // Content on the current line.
    const int col = column(pos_);
    if (ctx == Context::MapValue) return parseBlockAt(parentIndent, col, false);
    return parseBlockAt(parentIndent, col, true);
  }

  // A node whose first character is at pos_ (column col). Block collections
  // are allowed unless the node follows "key:" on the same line.
  Result<json> parseBlockAt(int parentIndent, int col, bool allowCollections) {
    const char c = cur();
    if (c == '&' || c == '*') return fail(pos_, "anchors and aliases are not supported");
    if (c == '!') return fail(pos_, "tags are not supported");
    if (c == '?') return fail(pos_, "complex mapping keys are not supported");
    if (c == '@' || c == '`') return fail(pos_, std::string("a plain value cannot start with '") + c + "'");
    if (c == '%' && col == 0) return fail(pos_, "unexpected directive");
    if (c == '|' || c == '>') return parseBlockScalar(parentIndent);
    if (isSequenceEntry(pos_)) {
      if (!allowCollections) return fail(pos_, "a block sequence cannot start on the line of its key");
      return parseBlockSequence(col);
    }
    auto key = scanMappingKey(pos_);
    if (key) {
      if (!allowCollections) return fail(pos_, "mapping values are not allowed here (a nested mapping must start on a new line)");
      return parseBlockMapping(col);
    }
    if (c == '[' || c == '{') {
      auto v = parseFlow();
      if (!v) return v;
      if (!restOfLineEmpty(pos_)) return fail(pos_, "unexpected characters after a flow collection");
      return v;
    }
    if (c == '"' || c == '\'') {
      auto v = parseQuoted();
      if (!v) return v.error();
      if (!restOfLineEmpty(pos_)) return fail(pos_, "unexpected characters after a quoted value");
      return json(std::move(*v));
    }
    return parsePlainBlock(parentIndent);
  }

  // ---- block mappings ----

  struct Key {
    std::string text;
    bool quoted = false;
    size_t colonPos = 0;
  };

  // If a mapping key starts at p (a scalar followed by ':' and a space or a
  // line end on the same line), returns it; pos_ is not moved.
  std::optional<Key> scanMappingKey(size_t p) {
    Key key;
    const char c = at(p);
    if (c == '"' || c == '\'') {
      const size_t saved = pos_;
      pos_ = p;
      auto q = parseQuoted();
      size_t end = pos_;
      pos_ = saved;
      if (!q) return std::nullopt;
      while (isBlank(at(end))) ++end;
      if (at(end) != ':') return std::nullopt;
      const char after = at(end + 1);
      if (!(isBlank(after) || isBreakOrEnd(after))) return std::nullopt;
      key.text = std::move(*q);
      key.quoted = true;
      key.colonPos = end;
      return key;
    }
    if (c == '[' || c == '{' || c == '#' || isBreakOrEnd(c)) return std::nullopt;
    size_t i = p;
    while (i < s_.size() && s_[i] != '\n') {
      if (s_[i] == ':' && (isBlank(at(i + 1)) || isBreakOrEnd(at(i + 1)))) {
        size_t end = i;
        while (end > p && isBlank(s_[end - 1])) --end;
        key.text = s_.substr(p, end - p);
        key.colonPos = i;
        return key;
      }
      if (s_[i] == '#' && i > p && isBlank(s_[i - 1])) return std::nullopt;
      ++i;
    }
    return std::nullopt;
  }

  Result<json> parseBlockMapping(int indent) {
    json object = json::object();
    while (true) {
      if (cur() == '&' || cur() == '*' || cur() == '!') return fail(pos_, "anchors, aliases and tags are not supported");
      if (cur() == '?') return fail(pos_, "complex mapping keys are not supported");
      auto key = scanMappingKey(pos_);
      if (!key) return fail(pos_, "expected a mapping key (\"key: value\")");
      if (!key->quoted && key->text == "<<") return fail(pos_, "merge keys are not supported");
      const std::string name = keyString(key->text, key->quoted);
      if (object.contains(name)) return fail(pos_, "duplicate key \"" + name + "\"");
      pos_ = key->colonPos + 1;
      auto value = parseNode(indent, Context::MapValue);
      if (!value) return value;
      object[name] = std::move(*value);

      Content next = nextContent(pos_);
      if (next.end || next.col < indent) break;
      if (next.col > indent) return fail(next.pos, "unexpected indentation");
      if (indentationHasTab(next.pos)) return fail(next.pos, "tabs are not allowed in indentation");
      if (isSequenceEntry(next.pos)) break;  // a sequence at the parent's indentation
      pos_ = next.pos;
    }
    return object;
  }

  // ---- block sequences ----

  Result<json> parseBlockSequence(int indent) {
    json array = json::array();
    while (true) {
      ++pos_;  // past '-'
      auto item = parseNode(indent, Context::SeqEntry);
      if (!item) return item;
      array.push_back(std::move(*item));

      Content next = nextContent(pos_);
      if (next.end || next.col < indent) break;
      if (next.col > indent) return fail(next.pos, "unexpected indentation");
      if (!isSequenceEntry(next.pos)) break;  // a key of the enclosing mapping
      pos_ = next.pos;
    }
    return array;
  }

  // ---- scalars ----

  // A plain scalar in block context, possibly continued on more-indented lines.
  Result<json> parsePlainBlock(int parentIndent) {
    const size_t start = pos_;
    std::string value;
    size_t p = pos_;
    auto scanLine = [&](size_t& q, std::string& out) -> Outcome {
      size_t begin = q;
      while (q < s_.size() && s_[q] != '\n') {
        if (s_[q] == '#' && q > begin && isBlank(s_[q - 1])) break;
        if (s_[q] == ':' && (isBlank(at(q + 1)) || isBreakOrEnd(at(q + 1))))
          return fail(q, "mapping values are not allowed here");
        ++q;
      }
      size_t end = q;
      while (end > begin && isBlank(s_[end - 1])) --end;
      out.append(s_, begin, end - begin);
      return {};
    };
    if (auto o = scanLine(p, value); !o) return o.error();
    // Continuation lines: more indented than the parent, folded like quoted
    // scalars (one break is a space, each empty line a newline).
    while (true) {
      size_t q = p;
      while (q < s_.size() && isBlank(s_[q])) ++q;
      if (q >= s_.size() || s_[q] != '\n') break;  // end of input, or a comment ends the scalar
      int breaks = 0;
      size_t lineBegin = q;
      while (q < s_.size()) {
        if (s_[q] == '\n') {
          ++breaks;
          lineBegin = ++q;
        } else if (isBlank(s_[q])) {
          ++q;
        } else {
          break;
        }
      }
      if (q >= s_.size()) break;
      const int col = static_cast<int>(q - lineBegin);
      if (col <= parentIndent || s_[q] == '#' || isDocumentMarker(q)) break;
      if (indentationHasTab(q)) return fail(q, "tabs are not allowed in indentation");
      std::string line;
      if (auto o = scanLine(q, line); !o) return o.error();
      if (breaks == 1)
        value += ' ';
      else
        value.append(static_cast<size_t>(breaks - 1), '\n');
      value += line;
      p = q;
    }
    pos_ = p;
    Resolved r = resolvePlain(value);
    if (!r.error.empty()) return fail(start, r.error);
    return std::move(r.value);
  }

  void appendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // Folds a line break inside a quoted scalar: one break is a space, each
  // further (empty) line a newline; leading blanks of the next line dropped.
  void foldQuotedBreak(std::string& out) {
    while (!out.empty() && isBlank(out.back())) out.pop_back();
    int breaks = 0;
    while (pos_ < s_.size() && (s_[pos_] == '\n' || isBlank(s_[pos_]))) {
      if (s_[pos_] == '\n') ++breaks;
      ++pos_;
    }
    if (breaks == 1)
      out += ' ';
    else
      out.append(static_cast<size_t>(breaks - 1), '\n');
  }

  // '...' or "..." at pos_; leaves pos_ after the closing quote.
  Result<std::string> parseQuoted() {
    const size_t start = pos_;
    const char quote = cur();
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) return fail(start, "unterminated quoted string");
      const char c = s_[pos_];
      if (quote == '\'') {
        if (c == '\'') {
          if (at(pos_ + 1) == '\'') {
            out += '\'';
            pos_ += 2;
            continue;
          }
          ++pos_;
          return out;
        }
      } else {
        if (c == '"') {
          ++pos_;
          return out;
        }
        if (c == '\\') {
          const char e = at(pos_ + 1);
          pos_ += 2;
          switch (e) {
            case '0': out += '\0'; break;
            case 'a': out += '\a'; break;
            case 'b': out += '\b'; break;
            case 't': case '\t': out += '\t'; break;
            case 'n': out += '\n'; break;
            case 'v': out += '\v'; break;
            case 'f': out += '\f'; break;
            case 'r': out += '\r'; break;
            case 'e': out += '\x1B'; break;
            case ' ': out += ' '; break;
            case '"': out += '"'; break;
            case '/': out += '/'; break;
            case '\\': out += '\\'; break;
            case 'N': appendUtf8(out, 0x85); break;
            case '_': appendUtf8(out, 0xA0); break;
            case 'L': appendUtf8(out, 0x2028); break;
            case 'P': appendUtf8(out, 0x2029); break;
            case 'x': case 'u': case 'U': {
              const size_t n = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
              if (pos_ + n > s_.size() || !allDigits(std::string_view(s_).substr(pos_, n), 16))
                return fail(pos_, "invalid escape in double-quoted string");
              const uint32_t cp = static_cast<uint32_t>(std::strtoul(s_.substr(pos_, n).c_str(), nullptr, 16));
              if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                return fail(pos_, "invalid Unicode code point in escape");
              appendUtf8(out, cp);
              pos_ += n;
              break;
            }
            case '\n': {
              // An escaped line break joins the lines without a space.
              while (pos_ < s_.size() && isBlank(s_[pos_])) ++pos_;
              break;
            }
            default:
              return fail(pos_ - 1, std::string("invalid escape \"\\") + (e ? std::string(1, e) : "") + "\"");
          }
          continue;
        }
      }
      if (c == '\n') {
        if (isDocumentMarker(pos_ + 1)) return fail(start, "unterminated quoted string");
        foldQuotedBreak(out);
        continue;
      }
      out += c;
      ++pos_;
    }
  }

  // | and > block scalars, with chomping (+/-) and indentation (1-9) indicators.
  Result<json> parseBlockScalar(int parentIndent) {
    const bool literal = cur() == '|';
    ++pos_;
    char chomp = 'c';
    int explicitIndent = 0;
    for (int i = 0; i < 2; ++i) {
      const char c = cur();
      if ((c == '+' || c == '-') && chomp == 'c') {
        chomp = c;
        ++pos_;
      } else if (c >= '1' && c <= '9' && explicitIndent == 0) {
        explicitIndent = c - '0';
        ++pos_;
      }
    }
    if (!restOfLineEmpty(pos_)) return fail(pos_, "unexpected characters after a block scalar indicator");
    while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
    if (pos_ < s_.size()) ++pos_;  // past the header's line break

    int indent = -1;
    if (explicitIndent) indent = parentIndent >= 0 ? parentIndent + explicitIndent : explicitIndent;
    std::vector<std::string> lines;
    size_t p = pos_;
    size_t consumedTo = pos_;
    while (p < s_.size()) {
      size_t lineEnd = s_.find('\n', p);
      if (lineEnd == std::string::npos) lineEnd = s_.size();
      const std::string_view line(s_.data() + p, lineEnd - p);
      size_t spaces = 0;
      while (spaces < line.size() && line[spaces] == ' ') ++spaces;
      const bool blank = line.find_first_not_of(" \t") == std::string_view::npos;
      if (blank) {
        if (indent >= 0 && spaces > static_cast<size_t>(indent))
          lines.emplace_back(line.substr(static_cast<size_t>(indent)));
        else
          lines.emplace_back();
      } else {
        if (indent < 0) {
          if (static_cast<int>(spaces) <= parentIndent) break;
          indent = static_cast<int>(spaces);
        }
        if (static_cast<int>(spaces) < indent) break;
        if (spaces == 0 && isDocumentMarker(p)) break;
        lines.emplace_back(line.substr(static_cast<size_t>(indent)));
      }
      p = lineEnd < s_.size() ? lineEnd + 1 : lineEnd;
      consumedTo = p;
    }
    // Trailing blank lines belong to chomping, not to the content; the
    // parser position stays after the last content line so that comments
    // and outer nodes are seen again.
    size_t contentLines = lines.size();
    while (contentLines > 0 && lines[contentLines - 1].find_first_not_of(" \t") == std::string::npos)
      --contentLines;
    const size_t trailingBreaks = lines.size() - contentLines;
    pos_ = consumedTo;

    std::string out;
    if (literal) {
      for (size_t i = 0; i < contentLines; ++i) {
        if (i) out += '\n';
        out += lines[i];
      }
    } else {
      int pendingBreaks = 0;
      bool prevNormal = false;
      bool any = false;
      for (size_t i = 0; i < contentLines; ++i) {
        const std::string& line = lines[i];
        if (line.empty()) {
          ++pendingBreaks;
          continue;
        }
        const bool moreIndented = line[0] == ' ' || line[0] == '\t';
        if (any) {
          if (prevNormal && !moreIndented) {
            if (pendingBreaks == 0)
              out += ' ';
            else
              out.append(static_cast<size_t>(pendingBreaks), '\n');
          } else {
            out.append(static_cast<size_t>(pendingBreaks + 1), '\n');
          }
        } else {
          out.append(static_cast<size_t>(pendingBreaks), '\n');
        }
        out += line;
        pendingBreaks = 0;
        prevNormal = !moreIndented;
        any = true;
      }
      if (!any) out.append(static_cast<size_t>(pendingBreaks), '\n');
    }
    const bool hasContent = contentLines > 0;
    if (chomp == 'c') {
      if (hasContent) out += '\n';
    } else if (chomp == '+') {
      if (hasContent) out += '\n';
      out.append(trailingBreaks, '\n');
    }
    return json(std::move(out));
  }

  // ---- flow collections ----

  void skipFlowSpace() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (isBlank(c) || c == '\n') {
        ++pos_;
      } else if (c == '#' && (pos_ == 0 || isBlank(s_[pos_ - 1]) || s_[pos_ - 1] == '\n')) {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  Result<json> parseFlow() {
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) return fail(pos_, "nesting too deep");
    const size_t start = pos_;
    const bool isSeq = cur() == '[';
    const char close = isSeq ? ']' : '}';
    ++pos_;
    json result = isSeq ? json::array() : json::object();
    while (true) {
      skipFlowSpace();
      if (pos_ >= s_.size() || isDocumentMarker(pos_))
        return fail(start, std::string("unterminated flow ") + (isSeq ? "sequence" : "mapping"));
      if (cur() == close) {
        ++pos_;
        return result;
      }
      // One entry: a node, optionally followed by ": value".
      bool quotedKey = false;
      std::string rawKey;
      auto first = parseFlowNode(&quotedKey, &rawKey);
      if (!first) return first;
      skipFlowSpace();
      bool pair = false;
      json second;
      if (cur() == ':') {
        ++pos_;
        pair = true;
        skipFlowSpace();
        if (cur() == ',' || cur() == close) {
          second = json();
        } else {
          auto v = parseFlowNode(nullptr, nullptr);
          if (!v) return v;
          second = std::move(*v);
          skipFlowSpace();
        }
      }
      if (isSeq) {
        if (pair) {
          json single = json::object();
          single[flowKeyString(*first, quotedKey, rawKey)] = std::move(second);
          result.push_back(std::move(single));
        } else {
          result.push_back(std::move(*first));
        }
      } else {
        const std::string name = flowKeyString(*first, quotedKey, rawKey);
        if (name.empty() && !first->is_string() && !first->is_null()) return fail(pos_, "a mapping key must be a scalar");
        if (result.contains(name)) return fail(pos_, "duplicate key \"" + name + "\"");
        result[name] = std::move(second);
      }
      if (pos_ >= s_.size() || isDocumentMarker(pos_))
        return fail(start, std::string("unterminated flow ") + (isSeq ? "sequence" : "mapping"));
      if (cur() == ',') {
        ++pos_;
        continue;
      }
      if (cur() == close) continue;
      return fail(pos_, std::string("expected ',' or '") + close + "'");
    }
  }

  std::string flowKeyString(const json& key, bool quoted, const std::string& raw) {
    if (key.is_object() || key.is_array()) return std::string();
    if (quoted) return key.get<std::string>();
    return keyString(raw, false);
  }

  Result<json> parseFlowNode(bool* quoted, std::string* raw) {
    const char c = cur();
    if (c == '[' || c == '{') return parseFlow();
    if (c == '&' || c == '*') return fail(pos_, "anchors and aliases are not supported");
    if (c == '!') return fail(pos_, "tags are not supported");
    if (c == '"' || c == '\'') {
      auto q = parseQuoted();
      if (!q) return q.error();
      if (quoted) *quoted = true;
      return json(std::move(*q));
    }
    if (c == ',' || c == ']' || c == '}') return fail(pos_, "expected a value");
    // Plain scalar in flow context: ends at flow indicators, ": " and " #".
    const size_t start = pos_;
    std::string value;
    int pendingBreaks = 0;
    while (pos_ < s_.size()) {
      const char ch = s_[pos_];
      if (isFlowIndicator(ch)) break;
      if (ch == ':' && (isBlank(at(pos_ + 1)) || isBreakOrEnd(at(pos_ + 1)) || isFlowIndicator(at(pos_ + 1)))) break;
      if (ch == '#' && pos_ > start && (isBlank(s_[pos_ - 1]) || s_[pos_ - 1] == '\n')) break;
      if (ch == '\n') {
        ++pendingBreaks;
        ++pos_;
        while (isBlank(cur())) ++pos_;
        continue;
      }
      if (pendingBreaks) {
        while (!value.empty() && isBlank(value.back())) value.pop_back();
        if (pendingBreaks == 1)
          value += ' ';
        else
          value.append(static_cast<size_t>(pendingBreaks - 1), '\n');
        pendingBreaks = 0;
      }
      value += ch;
      ++pos_;
    }
    while (!value.empty() && isBlank(value.back())) value.pop_back();
    if (raw) *raw = value;
    Resolved r = resolvePlain(value);
    if (!r.error.empty()) return fail(start, r.error);
    return std::move(r.value);
  }
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

}  // namespace

Result<nlohmann::json> parseYaml(std::string_view text) {
  if (auto bad = firstInvalidUtf8(text)) {
    int line = 1;
    for (size_t i = 0; i < *bad; ++i)
      if (text[i] == '\n') ++line;
    return Error{"line " + std::to_string(line) + ": invalid UTF-8"};
  }
  // Normalise line breaks; NUL bytes are not valid YAML characters.
  std::string normalised;
  normalised.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\r') {
      if (i + 1 < text.size() && text[i + 1] == '\n') continue;
      normalised += '\n';
    } else if (c == '\0') {
      int line = 1;
      for (size_t k = 0; k < i; ++k)
        if (text[k] == '\n') ++line;
      return Error{"line " + std::to_string(line) + ": NUL character in YAML"};
    } else {
      normalised += c;
    }
  }
  try {
    Parser parser(std::move(normalised));
    return parser.parseFirstDocument();
  } catch (const std::exception& e) {
    // Allocation failure or a json type error: never escape the boundary.
    return Error{std::string("invalid YAML: ") + e.what()};
  }
}

}  // namespace placer
