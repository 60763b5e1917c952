// Errors as values at internal boundaries: Status and StatusOr<T>, shaped like abseil's
// absl::Status and absl::StatusOr (the subset LazyFuse uses), so the public API can turn them into
// lf::Error with a message a user can act on.
//
// Our own rather than abseil's: Debian ships abseil as shared libraries, and absl::status pulls in
// 25 of them, which cost about 3 ms of every process start (an empty program starts in 2.4 ms, the
// same program linked with them in 5.7 ms on the 2-core machine): a third of a program's start with
// a warm kernel cache. Debian's static abseil is not position-independent, so it cannot be linked
// into liblazyfuse.so instead.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace lf {

enum class StatusCode : uint8_t {
  kOk,
  kInvalidArgument,
  kResourceExhausted,
  kUnimplemented,
  kInternal,
  kUnavailable,
};

std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  std::string_view message() const { return message_; }
  // "INTERNAL: message", or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

std::ostream& operator<<(std::ostream& os, const Status& s);

inline Status OkStatus() { return {}; }
inline Status InvalidArgumentError(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status ResourceExhaustedError(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status UnimplementedError(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }

// A T, or the Status saying why there is none. Made from an OK Status it holds an internal error
// instead (there would be neither value nor reason), as abseil's does.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status s) : status_(std::move(s)) {  // NOLINT: implicit, as `return InternalError(...)`
    if (status_.ok()) status_ = InternalError("StatusOr made from an OK status");
  }
  template <typename U = T>
    requires std::is_constructible_v<T, U&&> && (!std::is_same_v<std::remove_cvref_t<U>, Status>) &&
             (!std::is_same_v<std::remove_cvref_t<U>, StatusOr>)
  StatusOr(U&& value) : value_(std::forward<U>(value)) {}  // NOLINT: implicit, as `return value`
  // From a StatusOr of a convertible type (a derived class's shared_ptr).
  template <typename U>
    requires(!std::is_same_v<U, T>) && std::is_constructible_v<T, U&&>
  StatusOr(StatusOr<U>&& other) : status_(other.status()) {  // NOLINT
    if (other.ok()) value_.emplace(std::move(*other));
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }

  // The value; only when ok().
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T&& operator*() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace lf
