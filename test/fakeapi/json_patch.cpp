#include "test/fakeapi/json_patch.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace placer::fakeapi {
namespace {

using nlohmann::json;

Result<std::vector<std::string>> parsePointer(const std::string& path) {
  std::vector<std::string> tokens;
  if (path.empty()) return tokens;
  if (path.front() != '/') return Error{"JSON pointer must be empty or start with a \"/\": \"" + path + "\""};
  std::size_t start = 1;
  for (;;) {
    auto slash = path.find('/', start);
    std::string raw = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    std::string token;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else if (raw[i] == '~') {
        return Error{"invalid JSON pointer escape in \"" + path + "\""};
      } else {
        token += raw[i];
      }
    }
    tokens.push_back(std::move(token));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return tokens;
}

std::optional<std::size_t> arrayIndex(const std::string& token) {
  if (token.empty() || token.size() > 9) return std::nullopt;
  if (token.size() > 1 && token[0] == '0') return std::nullopt;
  for (char c : token)
    if (c < '0' || c > '9') return std::nullopt;
  return static_cast<std::size_t>(std::stoul(token));
}

json* walk(json& doc, const std::vector<std::string>& tokens, std::size_t count) {
  json* cur = &doc;
  for (std::size_t i = 0; i < count; ++i) {
    if (cur->is_object()) {
      auto it = cur->find(tokens[i]);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    } else if (cur->is_array()) {
      auto idx = arrayIndex(tokens[i]);
      if (!idx || *idx >= cur->size()) return nullptr;
      cur = &(*cur)[*idx];
    } else {
      return nullptr;
    }
  }
  return cur;
}

Outcome addAt(json& doc, const std::vector<std::string>& tokens, json value, const std::string& path,
              const char* op) {
  if (tokens.empty()) {
    doc = std::move(value);
    return {};
  }
  json* parent = walk(doc, tokens, tokens.size() - 1);
  const std::string missing = std::string(op) + " operation does not apply: doc is missing path: \"" + path +
                              "\": missing value";
  if (!parent) return Error{missing};
  const std::string& last = tokens.back();
  if (parent->is_object()) {
    (*parent)[last] = std::move(value);
    return {};
  }
  if (parent->is_array()) {
    if (last == "-") {
      parent->push_back(std::move(value));
      return {};
    }
    auto idx = arrayIndex(last);
    if (!idx || *idx > parent->size()) return Error{std::string(op) + " operation does not apply: index out of bounds: \"" + path + "\""};
    parent->insert(parent->begin() + static_cast<std::ptrdiff_t>(*idx), std::move(value));
    return {};
  }
  return Error{missing};
}

Result<json> removeAt(json& doc, const std::vector<std::string>& tokens, const std::string& path, const char* op) {
  const std::string missing =
      std::string(op) + " operation does not apply: doc is missing path: \"" + path + "\": missing value";
  if (tokens.empty()) return Error{missing};
  json* parent = walk(doc, tokens, tokens.size() - 1);
  if (!parent) return Error{missing};
  const std::string& last = tokens.back();
  if (parent->is_object()) {
    auto it = parent->find(last);
    if (it == parent->end()) return Error{missing};
    json v = std::move(*it);
    parent->erase(it);
    return v;
  }
  if (parent->is_array()) {
    auto idx = arrayIndex(last);
    if (!idx || *idx >= parent->size()) return Error{missing};
    json v = std::move((*parent)[*idx]);
    parent->erase(parent->begin() + static_cast<std::ptrdiff_t>(*idx));
    return v;
  }
  return Error{missing};
}

std::string stringMember(const json& op, const char* key) {
  auto it = op.find(key);
  return it != op.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Result<json> applyJsonPatch(const json& doc, const json& patch) {
  if (!patch.is_array()) return Error{"json: cannot unmarshal " + std::string(patch.type_name()) + " into Go value of type jsonpatch.Patch"};
  json out = doc;
  for (const json& op : patch) {
    if (!op.is_object()) return Error{"invalid JSON patch operation: not an object"};
    const std::string kind = stringMember(op, "op");
    const std::string path = stringMember(op, "path");
    if (!op.contains("path") || !op["path"].is_string()) return Error{"operation missing path: " + op.dump()};
    auto tokens = parsePointer(path);
    if (!tokens) return tokens.error();
    if (kind == "add") {
      if (!op.contains("value")) return Error{"add operation missing value"};
      if (auto o = addAt(out, *tokens, op["value"], path, "add"); !o) return o.error();
    } else if (kind == "remove") {
      if (auto r = removeAt(out, *tokens, path, "remove"); !r) return r.error();
    } else if (kind == "replace") {
      if (!op.contains("value")) return Error{"replace operation missing value"};
      json* target = walk(out, *tokens, tokens->size());
      if (!target) return Error{"replace operation does not apply: doc is missing key: " + path + ": missing value"};
      *target = op["value"];
    } else if (kind == "move" || kind == "copy") {
      const std::string from = stringMember(op, "from");
      auto fromTokens = parsePointer(from);
      if (!fromTokens) return fromTokens.error();
      json value;
      if (kind == "move") {
        auto r = removeAt(out, *fromTokens, from, "move");
        if (!r) return r.error();
        value = std::move(*r);
      } else {
        json* source = walk(out, *fromTokens, fromTokens->size());
        if (!source) return Error{"copy operation does not apply: doc is missing from path: \"" + from + "\": missing value"};
        value = *source;
      }
      if (auto o = addAt(out, *tokens, std::move(value), path, kind.c_str()); !o) return o.error();
    } else if (kind == "test") {
      json* target = walk(out, *tokens, tokens->size());
      const json expected = op.value("value", json());
      if (!target ? !expected.is_null() : *target != expected)
        return Error{"testing value " + path + " failed: test failed"};
    } else {
      return Error{"Unexpected kind: " + kind};
    }
  }
  return out;
}

}  // namespace placer::fakeapi
