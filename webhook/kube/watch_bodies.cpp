#include "webhook/kube/watch_bodies.h"

#include <nlohmann/json.hpp>

namespace placer::kube {
namespace {

std::string stringAt(const JsonValue& object, std::string_view a, std::string_view b) {
  auto i = object.member(a);
  if (!i) return {};
  auto j = i->member(b);
  if (!j) return {};
  return std::string(j->string().value_or(std::string_view()));
}

}  // namespace

Result<ListPageMetadata> readListMetadata(std::string_view bytes) {
  using nlohmann::json;
  json meta = json::parse(bytes, nullptr, false);
  if (!meta.is_object()) return Error{"list metadata: malformed"};
  ListPageMetadata out;
  if (auto c = meta.find("continue"); c != meta.end() && c->is_string()) out.continueToken = c->get<std::string>();
  if (auto r = meta.find("resourceVersion"); r != meta.end() && r->is_string()) out.resourceVersion = r->get<std::string>();
  return out;
}

Result<WatchEvent> readWatchEvent(JsonParser& parser, std::string_view bytes) {
  auto event = parser.parse(bytes);
  if (!event || !event->isObject())
    return Error{"watch event: " + (event ? std::string("not an object") : event.error().message)};
  auto typeValue = event->member("type");
  auto objectValue = event->member("object");
  auto typeText = typeValue ? typeValue->string() : std::nullopt;
  if (!typeText || !objectValue || !objectValue->isObject()) return Error{"watch event: missing type or object"};
  const std::string_view type = *typeText;
  WatchEvent out{WatchEvent::Type::Unknown, *objectValue, {}, {}};
  if (type == "ERROR") {
    auto code = objectValue->member("code");
    if (code && code->integer() == 410) {
      out.type = WatchEvent::Type::Expired;
      return out;
    }
    out.type = WatchEvent::Type::Failed;
    auto message = objectValue->member("message");
    auto messageText = message ? message->string() : std::nullopt;
    out.message = messageText ? std::string(*messageText) : objectValue->text();
    return out;
  }
  if (type == "ADDED" || type == "MODIFIED")
    out.type = WatchEvent::Type::Upserted;
  else if (type == "DELETED")
    out.type = WatchEvent::Type::Deleted;
  else if (type == "BOOKMARK")
    out.type = WatchEvent::Type::Bookmark;
  else
    return out;  // Unknown: its version is not trusted
  out.resourceVersion = stringAt(*objectValue, "metadata", "resourceVersion");
  return out;
}

}  // namespace placer::kube
