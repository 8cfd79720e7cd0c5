// Error model of the whole project (see DESIGN.md, "Conventions").
//
// Failures a user can cause (bad file, unsupported op, bad flag) are values: a function returns
// `Status` or `Result<T>` carrying a message that names the place and what to do. Broken internal
// invariants are not values: ALPA_CHECK aborts with the message. No exceptions cross a library
// boundary.
#ifndef ALPA_SUPPORT_STATUS_H_
#define ALPA_SUPPORT_STATUS_H_

#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace alpa {

enum class StatusCode {
  kOk,
  kInvalidArgument,  // malformed input: a file, a flag, a shape that breaks an op's rule
  kNotFound,         // a named thing (file, computation, instruction) does not exist
  kUnimplemented,    // valid input this build cannot handle yet
  kFailedPrecondition,
  kResourceExhausted,  // out of memory, or no plan fits in it
  kDeadlineExceeded,   // a peer did not arrive in time (a collective timed out)
  kInternal,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>", for adding the place on the way up.
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename... Args>
Status InvalidArgument(fmt::format_string<Args...> format, Args&&... args) {
  return Status(StatusCode::kInvalidArgument, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
Status NotFound(fmt::format_string<Args...> format, Args&&... args) {
  return Status(StatusCode::kNotFound, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
Status Unimplemented(fmt::format_string<Args...> format, Args&&... args) {
  return Status(StatusCode::kUnimplemented, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
Status FailedPrecondition(fmt::format_string<Args...> format, Args&&... args) {
  return Status(StatusCode::kFailedPrecondition, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
Status Internal(fmt::format_string<Args...> format, Args&&... args) {
  return Status(StatusCode::kInternal, fmt::format(format, std::forward<Args>(args)...));
}

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : state_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (std::get<Status>(state_).ok()) {
      state_ = Status(StatusCode::kInternal, "Result constructed from an OK status");
    }
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const& {
    static const Status* const kOk = new Status();
    return ok() ? *kOk : std::get<Status>(state_);
  }
  // By value on a temporary, so that `ALPA_RETURN_IF_ERROR(F().status())` does not keep a
  // reference into a Result that is gone.
  Status status() && { return status(); }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> state_;
};

namespace internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              const std::string& message);
inline const Status& GetStatus(const Status& status) { return status; }
template <typename T>
const Status& GetStatus(const Result<T>& result) {
  return result.status();
}
}  // namespace internal

}  // namespace alpa

#define ALPA_CONCAT_IMPL(a, b) a##b
#define ALPA_CONCAT(a, b) ALPA_CONCAT_IMPL(a, b)

// Returns the error of `expr` (a Status or Result) from the enclosing function.
#define ALPA_RETURN_IF_ERROR(expr)                                                \
  do {                                                                            \
    const auto& alpa_status_or = (expr);                                          \
    if (!alpa_status_or.ok()) return ::alpa::internal::GetStatus(alpa_status_or); \
  } while (false)

// `ALPA_ASSIGN_OR_RETURN(auto x, F());` binds the value of a Result or returns its error.
#define ALPA_ASSIGN_OR_RETURN(lhs, expr) \
  ALPA_ASSIGN_OR_RETURN_IMPL(ALPA_CONCAT(alpa_result_, __LINE__), lhs, expr)
#define ALPA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

// Internal invariants: abort with file:line and a message. Never for user input.
#define ALPA_CHECK(cond, ...)                                                                \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      ::alpa::internal::CheckFailed(__FILE__, __LINE__, #cond, fmt::format("" __VA_ARGS__)); \
    }                                                                                        \
  } while (false)

#endif  // ALPA_SUPPORT_STATUS_H_
