// Status and Result<T>: the one error type at module boundaries.
// Vendor codes (errno, io_uring negative errno, MPI, CUDA, NCCL) are converted
// at once with the ZINF_* macros below, which record file:line.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace zinf {

enum class Code {
  kOk = 0,
  kInvalidArgument,  // bad user input (file, key, value)
  kNotFound,         // missing file or key
  kIo,               // read/write/syscall failure
  kNoSpace,          // ENOSPC, arena or tier capacity exceeded
  kOutOfMemory,      // device arena or host pool exhausted
  kCorrupt,          // checksum mismatch, truncated file
  kUnsupported,      // feature not available here (no GPU, no O_DIRECT)
  kInfeasible,       // no plan fits the memory limits
  kInternal,         // a bug: an invariant broke
  kAborted,          // interrupted (signal, peer rank died)
};

const char* CodeName(Code c);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: models/x.yaml: key 'hidden': must be > 0".
  std::string ToString() const;

  // Prefix context ("while reading plan.yaml: ...") keeping the code.
  Status WithContext(std::string_view context) const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
inline Status IoError(std::string m) { return {Code::kIo, std::move(m)}; }
inline Status NoSpace(std::string m) { return {Code::kNoSpace, std::move(m)}; }
inline Status OutOfMemory(std::string m) { return {Code::kOutOfMemory, std::move(m)}; }
inline Status Corrupt(std::string m) { return {Code::kCorrupt, std::move(m)}; }
inline Status Unsupported(std::string m) { return {Code::kUnsupported, std::move(m)}; }
inline Status Infeasible(std::string m) { return {Code::kInfeasible, std::move(m)}; }
inline Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
inline Status Aborted(std::string m) { return {Code::kAborted, std::move(m)}; }

// Process exit code for a final Status, shared by zplan and zrun: 0 ok, 2 bad input or
// usage (InvalidArgument, NotFound), 3 no feasible plan (Infeasible), 1 any other failure.
int ExitCodeFor(const Status& s);

// errno -> Status (ENOSPC -> kNoSpace, ENOENT -> kNotFound, else kIo).
Status ErrnoStatus(int err, std::string_view what, const char* file, int line);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace zinf

#define ZINF_CONCAT_INNER(a, b) a##b
#define ZINF_CONCAT(a, b) ZINF_CONCAT_INNER(a, b)

#define ZINF_RETURN_IF_ERROR(expr)            \
  do {                                        \
    ::zinf::Status zinf_st_ = (expr);         \
    if (!zinf_st_.ok()) return zinf_st_;      \
  } while (0)

#define ZINF_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

#define ZINF_ASSIGN_OR_RETURN(lhs, expr) \
  ZINF_ASSIGN_OR_RETURN_IMPL(ZINF_CONCAT(zinf_r_, __LINE__), lhs, expr)

// For syscalls returning -1 and setting errno.
#define ZINF_CHECK_ERRNO(call, what)                                        \
  do {                                                                      \
    if ((call) < 0) return ::zinf::ErrnoStatus(errno, what, __FILE__, __LINE__); \
  } while (0)

// For io_uring-style calls returning -errno.
#define ZINF_CHECK_NEG_ERRNO(call, what)                                      \
  do {                                                                        \
    int zinf_rc_ = (call);                                                    \
    if (zinf_rc_ < 0) return ::zinf::ErrnoStatus(-zinf_rc_, what, __FILE__, __LINE__); \
  } while (0)
