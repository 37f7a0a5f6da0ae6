// Status and Result<T>: the one error type of nbdkeeper.
//
// Every fallible call returns a Status (or a Result<T> carrying a value or a
// Status). The code says what kind of failure it is, the message says what
// exactly is wrong, naming the field, file or device. csi/ translates codes
// to gRPC codes in exactly one place (csi/grpc_status.h).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace nbdk {

enum class Code {
  kOk = 0,
  kInvalidArgument,     // the caller's input is wrong
  kNotFound,            // the named thing does not exist
  kAlreadyExists,       // exists, and incompatibly so
  kFailedPrecondition,  // the system is not in a state that allows this
  kAborted,             // a concurrent operation conflicts; retry later
  kOutOfRange,          // a well-formed value this system cannot serve (a size)
  kUnavailable,         // a dependency (kernel module, cluster) is absent
  kDeadlineExceeded,    // a deadline passed before the work finished
  kResourceExhausted,   // out of devices, memory or file descriptors
  kIoError,             // a system call failed
  kCorruption,          // stored data does not parse or fails its checksum
  kUnimplemented,       // not supported by this build
  kInternal,            // a broken invariant: a bug
};

std::string_view CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {Code::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) { return {Code::kFailedPrecondition, std::move(m)}; }
  static Status Aborted(std::string m) { return {Code::kAborted, std::move(m)}; }
  static Status OutOfRange(std::string m) { return {Code::kOutOfRange, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status DeadlineExceeded(std::string m) { return {Code::kDeadlineExceeded, std::move(m)}; }
  static Status ResourceExhausted(std::string m) { return {Code::kResourceExhausted, std::move(m)}; }
  static Status IoError(std::string m) { return {Code::kIoError, std::move(m)}; }
  static Status Corruption(std::string m) { return {Code::kCorruption, std::move(m)}; }
  static Status Unimplemented(std::string m) { return {Code::kUnimplemented, std::move(m)}; }
  static Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
  // "<what>: <strerror(err)>". The few errno values a caller tells apart get
  // their own code (see status.cc); every other is an IoError.
  static Status FromErrno(int err, std::string_view what);

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: volume_id: missing"; "OK" for success.
  std::string ToString() const;
  // Prefixes the message with context, keeping the code: "stage vol-1: ...".
  Status WithContext(std::string_view context) const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// A value or the Status saying why there is none. Constructing from an OK
// Status is a bug.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).ok()); }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace nbdk

// Returns early from the enclosing function when `expr` is not OK.
#define NBDK_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::nbdk::Status nbdk_status_ = (expr);        \
    if (!nbdk_status_.ok()) return nbdk_status_; \
  } while (0)
