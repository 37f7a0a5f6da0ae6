#include "base/status.h"

#include <cerrno>
#include <cstring>

namespace nbdk {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "OK";
    case Code::kInvalidArgument:
      return "InvalidArgument";
    case Code::kNotFound:
      return "NotFound";
    case Code::kAlreadyExists:
      return "AlreadyExists";
    case Code::kFailedPrecondition:
      return "FailedPrecondition";
    case Code::kAborted:
      return "Aborted";
    case Code::kOutOfRange:
      return "OutOfRange";
    case Code::kUnavailable:
      return "Unavailable";
    case Code::kDeadlineExceeded:
      return "DeadlineExceeded";
    case Code::kResourceExhausted:
      return "ResourceExhausted";
    case Code::kIoError:
      return "IoError";
    case Code::kCorruption:
      return "Corruption";
    case Code::kUnimplemented:
      return "Unimplemented";
    case Code::kInternal:
      return "Internal";
  }
  return "Unknown";
}

Status Status::FromErrno(int err, std::string_view what) {
  std::string m(what);
  m += ": ";
  m += std::strerror(err);
  // Only what a caller branches on or a CSI client must tell apart gets its own
  // code; every other errno is an I/O error (LevelDB's rule). EINVAL from a
  // system call is our bug or the kernel's, never the request's fault.
  switch (err) {
    case ENOENT:
      return NotFound(std::move(m));
    case EEXIST:
      return AlreadyExists(std::move(m));
    case ETIMEDOUT:
      return DeadlineExceeded(std::move(m));
    case ENOMEM:
    case EMFILE:
    case ENFILE:
    case EDQUOT:
    case ENOSPC:
      return ResourceExhausted(std::move(m));
    case EACCES:
    case EPERM:
      return FailedPrecondition(std::move(m));
    default:
      return IoError(std::move(m));
  }
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s(CodeName(code_));
  s += ": ";
  s += message_;
  return s;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string m(context);
  m += ": ";
  m += message_;
  return {code_, std::move(m)};
}

}  // namespace nbdk
