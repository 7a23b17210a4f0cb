#pragma once
// Expected failures travel as values. An Error names what went wrong and where
// (a JSON path such as "spec.containers[0].resources.requests.cpu").

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace placer {

struct Error {
  std::string message;
};

// "field[index]": the path of a list's element.
inline std::string indexedField(std::string_view field, size_t index) {
  std::string p(field);
  p += '[';
  p += std::to_string(index);
  p += ']';
  return p;
}

// "field: what" — the shape every decode error takes.
inline Error fieldError(std::string_view field, std::string_view what) {
  std::string m;
  m.reserve(field.size() + what.size() + 2);
  m.append(field).append(": ").append(what);
  return Error{std::move(m)};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return std::get<0>(v_); }
  const T& operator*() const& { return std::get<0>(v_); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// For operations that produce nothing but may fail.
class [[nodiscard]] Outcome {
 public:
  Outcome() = default;
  Outcome(Error error) : error_(std::move(error.message)), failed_(true) {}
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  Error error() const { return Error{error_}; }

 private:
  std::string error_;
  bool failed_ = false;
};

}  // namespace placer
