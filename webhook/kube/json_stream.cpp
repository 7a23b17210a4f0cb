#include "webhook/kube/json_stream.h"

#include <charconv>
#include <cstdlib>
#include <cstring>

#include "scoring/json_stream_scanner.h"

namespace placer::kube {
namespace {

using json_bytes::endsScalar;
using json_bytes::isSpace;
using json_bytes::nextStructural;

// Spellings of the filters (see FieldFilter::parse). What the model decodes and
// nothing else: annotations only placer's own, containers without env, probes,
// command or mounts, status only the phase and what an in-place resize changes.
constexpr std::string_view kContainerFields = "{name,image,resources,ports,restartPolicy}";
std::string podFields() {
  return std::string(
             "apiVersion,kind,"
             "metadata{name,namespace,uid,generateName,resourceVersion,labels,deletionTimestamp,"
             "annotations{placer.io/reservation,placer.io/assigned-node,placer.io/score,placer.io/unassigned-reason},"
             "ownerReferences{apiVersion,kind,name,uid,controller}},"
             "spec{nodeName,schedulerName,nodeSelector,affinity,tolerations,topologySpreadConstraints,"
             "priority,schedulingGates,overhead,resources,volumes{name,persistentVolumeClaim,ephemeral},containers") +
         std::string(kContainerFields) + ",initContainers" + std::string(kContainerFields) +
         "},status{phase,conditions{type,reason},"  // in-place resize: PodResizePending
         "nominatedNodeName,reason,message,"     // preemption; kubelet rejections
         "containerStatuses{name,allocatedResources,resources},"
         "initContainerStatuses{name,allocatedResources,resources}}";
}
constexpr std::string_view kNodeFields =
    "apiVersion,kind,metadata{name,uid,resourceVersion,labels},spec{taints,unschedulable},"
    "status{allocatable,capacity,images}";
constexpr std::string_view kNodeFieldsWithImagesText =
    "apiVersion,kind,metadata{name,uid,resourceVersion,labels},spec{taints,unschedulable},"
    "status{allocatable,capacity,images*}";

constexpr int kMaxDepth = 64;  // deeper kept values are refused (no stack exhaustion)

class FilteredParser {
 public:
  explicit FilteredParser(std::string_view bytes) : b_(bytes) {}

  Result<nlohmann::json> run(const FieldFilter& filter) {
    nlohmann::json out;
    skipWs();
    if (!value(filter, out)) return error();
    skipWs();
    if (pos_ != b_.size()) return fail("unexpected data after the value"), error();
    return out;
  }

  Result<std::vector<RawMember>> members() {
    std::vector<RawMember> out;
    if (Outcome r = membersInto(out); !r) return r.error();
    return out;
  }
  Outcome membersInto(std::vector<RawMember>& out) {
    out.clear();
    skipWs();
    if (pos_ >= b_.size() || b_[pos_] != '{') return fail("expected a JSON object"), Outcome(error());
    ++pos_;
    skipWs();
    if (pos_ < b_.size() && b_[pos_] == '}') {
      ++pos_;
      return finished();
    }
    while (true) {
      skipWs();
      RawMember& m = out.emplace_back();
      if (!string(m.key)) return error();
      skipWs();
      if (pos_ >= b_.size() || b_[pos_] != ':') return fail("expected ':'"), Outcome(error());
      ++pos_;
      skipWs();
      size_t start = pos_;
      if (!skipValue()) return error();
      m.value = b_.substr(start, pos_ - start);
      skipWs();
      if (pos_ >= b_.size()) return fail("unterminated object"), Outcome(error());
      if (b_[pos_] == '}') {
        ++pos_;
        return finished();
      }
      if (b_[pos_] != ',') return fail("expected ',' or '}'"), Outcome(error());
      ++pos_;
    }
  }

  // Elements of an array: each element is handed to `element` at its first
  // byte and must leave pos_ one past its last.
  template <class Out, class Element>
  Outcome elementsInto(Out& out, Element element) {
    skipWs();
    if (pos_ >= b_.size() || b_[pos_] != '[') return fail("expected an array"), Outcome(error());
    ++pos_;
    skipWs();
    if (pos_ < b_.size() && b_[pos_] == ']') {
      ++pos_;
      return finished();
    }
    while (true) {
      skipWs();
      if (!element(out)) return Outcome(error());
      skipWs();
      if (pos_ >= b_.size()) return fail("unterminated array"), Outcome(error());
      if (b_[pos_] == ']') {
        ++pos_;
        return finished();
      }
      if (b_[pos_] != ',') return fail("expected ',' or ']'"), Outcome(error());
      ++pos_;
    }
  }
  Result<std::vector<std::string_view>> rawElements() {
    std::vector<std::string_view> out;
    if (Outcome r = rawElementsInto(out); !r) return r.error();
    return out;
  }
  Outcome filteredElements(const FieldFilter& filter, const FilteredElementSink& sink) {
    size_t index = 0;
    Outcome sinkError;
    int unused = 0;
    Outcome r = elementsInto(unused, [&](int&) {
      size_t start = pos_;
      nlohmann::json element;
      if (!value(filter, element)) return false;
      sinkError = sink(index++, b_.substr(start, pos_ - start), element);
      return sinkError.ok() || (fail("stopped by the caller"), false);
    });
    if (!sinkError) return sinkError;
    return r;
  }
  Outcome rawElementsInto(std::vector<std::string_view>& out) {
    out.clear();
    return elementsInto(out, [&](std::vector<std::string_view>& o) {
      size_t start = pos_;
      if (!skipValue()) return false;
      o.push_back(b_.substr(start, pos_ - start));
      return true;
    });
  }
  Result<std::string> wholeString() {
    std::string out;
    if (!string(out)) return error();
    if (pos_ != b_.size()) return fail("unexpected data after the string"), error();
    return out;
  }

 private:
  Outcome finished() {
    skipWs();
    if (pos_ != b_.size()) return fail("unexpected data after the value"), Outcome(error());
    return {};
  }

  Error error() const { return Error{"invalid JSON at offset " + std::to_string(errorAt_) + ": " + message_}; }
  bool fail(const char* message) {
    if (message_.empty()) {
      message_ = message;
      errorAt_ = pos_;
    }
    return false;
  }
  void skipWs() {
    while (pos_ < b_.size() && isSpace(b_[pos_])) ++pos_;
  }
  // pos_ at the opening quote; leaves pos_ after the closing quote.
  bool skipString() {
    ++pos_;
    while (true) {
      const char* start = b_.data() + pos_;
      size_t left = b_.size() - pos_;
      // Fast path: find the next quote, then check it is not escaped.
      const void* q = std::memchr(start, '"', left);
      if (!q) return pos_ = b_.size(), fail("unterminated string");
      size_t quote = static_cast<const char*>(q) - b_.data();
      size_t backslashes = 0;
      while (quote - backslashes > pos_ && b_[quote - 1 - backslashes] == '\\') ++backslashes;
      pos_ = quote + 1;
      if (backslashes % 2 == 0) return true;
    }
  }
  // Steps over one value of any kind without building it.
  bool skipValue() {
    if (pos_ >= b_.size()) return fail("unexpected end");
    char c = b_[pos_];
    if (c == '"') return skipString();
    if (c == '{' || c == '[') {
      int depth = 0;
      while (true) {
        pos_ = nextStructural(b_.data(), pos_, b_.size());
        if (pos_ >= b_.size()) break;
        char d = b_[pos_];
        if (d == '"') {
          if (!skipString()) return false;
          continue;
        }
        if (d == '{' || d == '[') {
          ++depth;
        } else if (d == '}' || d == ']') {
          if (--depth == 0) {
            ++pos_;
            return true;
          }
        }
        ++pos_;
      }
      return fail("unterminated object or array");
    }
    size_t start = pos_;
    while (pos_ < b_.size() && !endsScalar(b_[pos_])) ++pos_;
    if (pos_ == start) return fail("expected a value");
    return true;
  }
  // Builds the value at pos_ completely. Hand-written rather than a
  // nlohmann::json::parse per kept field: starting nlohmann's parser costs more
  // than the small values it would parse (see watch_decode_bench).
  bool build(nlohmann::json& out, int depth) {
    if (depth > kMaxDepth) return fail("nested too deeply");
    if (pos_ >= b_.size()) return fail("unexpected end");
    switch (b_[pos_]) {
      case '"': {
        std::string text;
        if (!string(text)) return false;
        out = std::move(text);
        return true;
      }
      case '{': {
        ++pos_;
        out = nlohmann::json::object();
        skipWs();
        if (pos_ < b_.size() && b_[pos_] == '}') return ++pos_, true;
        std::string name;
        while (true) {
          skipWs();
          if (!string(name)) return false;
          skipWs();
          if (pos_ >= b_.size() || b_[pos_] != ':') return fail("expected ':'");
          ++pos_;
          skipWs();
          nlohmann::json element;
          if (!build(element, depth + 1)) return false;
          out[name] = std::move(element);
          skipWs();
          if (pos_ >= b_.size()) return fail("unterminated object");
          if (b_[pos_] == '}') return ++pos_, true;
          if (b_[pos_] != ',') return fail("expected ',' or '}'");
          ++pos_;
        }
      }
      case '[': {
        ++pos_;
        out = nlohmann::json::array();
        skipWs();
        if (pos_ < b_.size() && b_[pos_] == ']') return ++pos_, true;
        while (true) {
          skipWs();
          nlohmann::json element;
          if (!build(element, depth + 1)) return false;
          out.push_back(std::move(element));
          skipWs();
          if (pos_ >= b_.size()) return fail("unterminated array");
          if (b_[pos_] == ']') return ++pos_, true;
          if (b_[pos_] != ',') return fail("expected ',' or ']'");
          ++pos_;
        }
      }
      default:
        return scalar(out);
    }
  }
  bool literal(std::string_view word) {
    if (b_.substr(pos_, word.size()) != word) return fail("malformed value");
    pos_ += word.size();
    return true;
  }
  bool scalar(nlohmann::json& out) {
    char c = b_[pos_];
    if (c == 't') return out = true, literal("true");
    if (c == 'f') return out = false, literal("false");
    if (c == 'n') return out = nullptr, literal("null");
    size_t start = pos_;
    bool integral = true;
    while (pos_ < b_.size()) {
      char d = b_[pos_];
      if (d == '.' || d == 'e' || d == 'E' || d == '+') {
        integral = false;
      } else if (!(d >= '0' && d <= '9') && d != '-') {
        break;
      }
      ++pos_;
    }
    const char* first = b_.data() + start;
    const char* last = b_.data() + pos_;
    if (first == last) return fail("malformed value");
    if (integral) {
      int64_t i = 0;
      auto r = std::from_chars(first, last, i);
      if (r.ec == std::errc() && r.ptr == last) return out = i, true;
      uint64_t u = 0;
      r = std::from_chars(first, last, u);
      if (r.ec == std::errc() && r.ptr == last) return out = u, true;
    }
    double d = 0;
    auto r = std::from_chars(first, last, d);
    if (r.ec != std::errc() || r.ptr != last) return pos_ = start, fail("malformed number");
    out = d;
    return true;
  }
  // A string at pos_, unescaped. Escapes are rare in Kubernetes objects: they
  // take nlohmann's decoder (\uXXXX, surrogate pairs).
  bool string(std::string& out) {
    if (pos_ >= b_.size() || b_[pos_] != '"') return fail("expected a string");
    size_t start = pos_;
    if (!skipString()) return false;
    std::string_view raw = b_.substr(start + 1, pos_ - start - 2);
    if (raw.find('\\') == std::string_view::npos) {
      out.assign(raw);
      return true;
    }
    auto decoded = nlohmann::json::parse(b_.begin() + start, b_.begin() + pos_, nullptr, false);
    if (!decoded.is_string()) return pos_ = start, fail("malformed string");
    out = decoded.get<std::string>();
    return true;
  }
  bool value(const FieldFilter& filter, nlohmann::json& out, int depth = 0) {
    if (depth > kMaxDepth) return fail("nested too deeply");
    if (pos_ >= b_.size()) return fail("unexpected end");
    char c = b_[pos_];
    if (filter.keepsAll() || (c != '{' && c != '[')) return build(out, depth);
    ++pos_;
    skipWs();
    if (c == '[') {
      out = nlohmann::json::array();
      if (pos_ < b_.size() && b_[pos_] == ']') return ++pos_, true;
      while (true) {
        skipWs();
        nlohmann::json element;
        if (!value(filter, element, depth + 1)) return false;
        out.push_back(std::move(element));
        skipWs();
        if (pos_ >= b_.size()) return fail("unterminated array");
        if (b_[pos_] == ']') return ++pos_, true;
        if (b_[pos_] != ',') return fail("expected ',' or ']'");
        ++pos_;
      }
    }
    out = nlohmann::json::object();
    if (pos_ < b_.size() && b_[pos_] == '}') return ++pos_, true;
    std::string name;
    while (true) {
      skipWs();
      if (!string(name)) return false;
      skipWs();
      if (pos_ >= b_.size() || b_[pos_] != ':') return fail("expected ':'");
      ++pos_;
      skipWs();
      if (const FieldFilter* child = filter.child(name); child && child->keepsText()) {
        size_t start = pos_;
        if (!skipValue()) return false;
        out[name] = std::string(b_.substr(start, pos_ - start));
      } else if (child) {
        nlohmann::json element;
        if (!value(*child, element, depth + 1)) return false;
        out[name] = std::move(element);
      } else if (!skipValue()) {
        return false;
      }
      skipWs();
      if (pos_ >= b_.size()) return fail("unterminated object");
      if (b_[pos_] == '}') return ++pos_, true;
      if (b_[pos_] != ',') return fail("expected ',' or '}'");
      ++pos_;
    }
  }

  std::string_view b_;
  size_t pos_ = 0;
  std::string message_;
  size_t errorAt_ = 0;
};

}  // namespace

FieldFilter FieldFilter::parse(std::string_view spec) {
  struct Parser {
    std::string_view s;
    size_t pos = 0;
    void list(std::vector<std::pair<std::string, FieldFilter>>& out) {
      while (pos < s.size() && s[pos] != '}') {
        size_t start = pos;
        while (pos < s.size() && s[pos] != ',' && s[pos] != '{' && s[pos] != '}') ++pos;
        if (pos == start) std::abort();  // empty key: a malformed filter is a programming error
        FieldFilter child;
        std::string name(s.substr(start, pos - start));
        if (name.back() == '*') {
          name.pop_back();
          child.text_ = true;
          if (name.empty()) std::abort();
        }
        if (pos < s.size() && s[pos] == '{') {
          ++pos;
          list(child.children_);
          if (pos >= s.size() || s[pos] != '}') std::abort();
          ++pos;
        }
        out.emplace_back(std::move(name), std::move(child));
        if (pos < s.size() && s[pos] == ',') ++pos;
      }
    }
  };
  FieldFilter root;
  Parser p{spec};
  p.list(root.children_);
  if (p.pos != spec.size()) std::abort();
  return root;
}

const FieldFilter* FieldFilter::child(std::string_view key) const {
  for (const auto& [name, filter] : children_)
    if (name == key) return &filter;
  return nullptr;
}

const FieldFilter& podFilter() {
  static const FieldFilter filter = FieldFilter::parse(podFields());
  return filter;
}
const FieldFilter& nodeFilter() {
  static const FieldFilter filter = FieldFilter::parse(kNodeFields);
  return filter;
}
const FieldFilter& nodeFilterWithImagesText() {
  static const FieldFilter filter = FieldFilter::parse(kNodeFieldsWithImagesText);
  return filter;
}
const FieldFilter& keepEverything() {
  static const FieldFilter filter;
  return filter;
}
const FieldFilter& admissionReviewFilter() {
  static const FieldFilter filter = FieldFilter::parse(
      "apiVersion,kind,request{uid,kind{group,version,kind},namespace,name,operation,subResource,dryRun,object{" +
      podFields() + "}}");
  return filter;
}

Result<nlohmann::json> parseFiltered(std::string_view bytes, const FieldFilter& filter) {
  return FilteredParser(bytes).run(filter);
}

Result<std::vector<RawMember>> rawObjectMembers(std::string_view bytes) { return FilteredParser(bytes).members(); }

Result<std::vector<std::string_view>> rawArrayElements(std::string_view bytes) {
  return FilteredParser(bytes).rawElements();
}

Outcome rawObjectMembers(std::string_view bytes, std::vector<RawMember>& out) {
  return FilteredParser(bytes).membersInto(out);
}

Outcome rawArrayElements(std::string_view bytes, std::vector<std::string_view>& out) {
  return FilteredParser(bytes).rawElementsInto(out);
}

Outcome forEachFilteredElement(std::string_view arrayBytes, const FieldFilter& filter, const FilteredElementSink& sink) {
  return FilteredParser(arrayBytes).filteredElements(filter, sink);
}

Result<std::string> unescapeJsonString(std::string_view quoted) { return FilteredParser(quoted).wholeString(); }

}  // namespace placer::kube
