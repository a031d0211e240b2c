#include "util/confine.hpp"

#include "util/error.hpp"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kopt::util {

namespace {

// Landlock's interface (linux/landlock.h), spelled out: Debian 12's headers stop at ABI 2.
struct RulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};
struct __attribute__((packed)) PathBeneathAttr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};
constexpr long kCreateRuleset = 444, kAddRule = 445, kRestrictSelf = 446;
constexpr std::uint32_t kCreateRulesetVersion = 1;
constexpr int kRulePathBeneath = 1;
constexpr std::uint64_t kWriteFile = 1ULL << 1;
constexpr std::uint64_t kTruncate = 1ULL << 14; // ABI 3
constexpr std::uint64_t kRefer = 1ULL << 13;    // ABI 2
// Every right that changes the file system: remove, make (char, dir, reg, sock, fifo, block, sym).
constexpr std::uint64_t kChanges = (1ULL << 4) | (1ULL << 5) | (1ULL << 6) | (1ULL << 7) |
                                   (1ULL << 8) | (1ULL << 9) | (1ULL << 10) | (1ULL << 11) |
                                   (1ULL << 12);
constexpr std::uint64_t kNetBindTcp = 1, kNetConnectTcp = 2; // ABI 4
constexpr std::uint64_t kScopeSignal = 2;                    // ABI 6

// The write rights Landlock `abi` handles: what a confined child lacks outside its folders.
std::uint64_t write_rights(int abi) {
  std::uint64_t rights = kWriteFile | kChanges;
  if (abi >= 2) {
    rights |= kRefer;
  }
  if (abi >= 3) {
    rights |= kTruncate;
  }
  return rights;
}

std::uint64_t file_rights(int abi) { return kWriteFile | (abi >= 3 ? kTruncate : 0); }

sock_filter stmt(std::uint16_t code, std::uint32_t k) { return BPF_STMT(code, k); }
sock_filter jump(std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
  return BPF_JUMP(code, k, jt, jf);
}

constexpr std::uint32_t kNr = offsetof(seccomp_data, nr);
constexpr std::uint32_t kArch = offsetof(seccomp_data, arch);
// The low and high 32 bits of argument i (x86-64 is little-endian).
constexpr std::uint32_t arg_low(int i) { return offsetof(seccomp_data, args) + 8 * i; }
constexpr std::uint32_t arg_high(int i) { return arg_low(i) + 4; }

constexpr std::uint32_t kAllow = SECCOMP_RET_ALLOW;
// A refused call raises SIGSYS: the harness's handler names the call (kopt-refused: ...).
constexpr std::uint32_t kRefuse = SECCOMP_RET_TRAP;

// A filter under construction: `when(nr, body)` runs `body` (which must end in a return on every
// path) for system call `nr`; the accumulator holds the call's number between blocks.
class Program {
public:
  void when(long nr, std::vector<sock_filter> body) {
    code_.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0,
                         static_cast<std::uint8_t>(body.size())));
    code_.insert(code_.end(), body.begin(), body.end());
  }
  void refuse(long nr) { when(nr, {stmt(BPF_RET | BPF_K, kRefuse)}); }
  void push(sock_filter f) { code_.push_back(f); }
  std::size_t size() const { return code_.size(); }
  std::vector<sock_filter> &code() { return code_; }

private:
  std::vector<sock_filter> code_;
};

// A block that allows the call when argument `arg`'s low 32 bits equal one of `values`, else
// refuses it; `at` is where the block starts in the program, and the position of each value's
// comparison is added to `positions` (apply() writes the child's pid there).
std::vector<sock_filter> allow_if_low_is(int arg, const std::vector<std::uint32_t> &values,
                                         std::size_t at, std::vector<std::size_t> &positions) {
  std::vector<sock_filter> body{stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(arg))};
  const auto count = static_cast<std::uint8_t>(values.size());
  for (std::uint8_t i = 0; i < count; ++i) {
    positions.push_back(at + 1 + body.size()); // +1: the block's opening jump
    body.push_back(
        jump(BPF_JMP | BPF_JEQ | BPF_K, values[i], static_cast<std::uint8_t>(count - i), 0));
  }
  body.push_back(stmt(BPF_RET | BPF_K, kRefuse));
  body.push_back(stmt(BPF_RET | BPF_K, kAllow));
  return body;
}

} // namespace

// The seccomp program and where apply() writes the child's own pid and its program's path.
struct PreparedConfinement::Filter {
  std::vector<sock_filter> code;
  std::vector<std::size_t> self_pid;       // positions of K's that must be the child's pid
  std::vector<std::size_t> minus_pid;      // ... its negation (its process group, for kill)
  std::size_t path_low = 0, path_high = 0; // execve's path pointer, 0: any path
};

int landlock_abi() {
  long abi = ::syscall(kCreateRuleset, nullptr, 0, kCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

#if defined(__x86_64__)
// The seccomp program of a confined child (`profiler`: one that starts the program itself).
void build_filter(PreparedConfinement::Filter &filter, bool profiler) {
  Program p;
  p.push(stmt(BPF_LD | BPF_W | BPF_ABS, kArch));
  p.push(jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
  p.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  p.push(stmt(BPF_LD | BPF_W | BPF_ABS, kNr));
  // The x32 numbers reach the same kernel functions under other numbers.
  p.push(jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
  p.push(stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  // Its CPU, its scheduling, other processes, namespaces: never.
  for (long nr :
       {SYS_sched_setaffinity, SYS_sched_setscheduler, SYS_sched_setparam, SYS_sched_setattr,
        SYS_setpriority, SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev, SYS_pidfd_open,
        SYS_pidfd_getfd, SYS_pidfd_send_signal, SYS_kcmp, SYS_tkill, SYS_unshare, SYS_setns,
        SYS_io_uring_setup, SYS_userfaultfd, SYS_bpf}) {
    p.refuse(nr);
  }
  // Signals only to itself: kill(its pid, its group or 0); tgkill and sigqueue to its threads.
  std::vector<std::size_t> kill_at;
  p.when(SYS_kill, allow_if_low_is(0, {0, 0, 0}, p.size(), kill_at));
  filter.self_pid.push_back(kill_at[0]);
  filter.minus_pid.push_back(kill_at[1]); // kill_at[2] stays 0: kill(0, sig), its own group
  for (long nr : {SYS_tgkill, SYS_rt_sigqueueinfo, SYS_rt_tgsigqueueinfo}) {
    p.when(nr, allow_if_low_is(0, {0}, p.size(), filter.self_pid));
  }
  if (!profiler) {
    // Threads, not processes: clone with CLONE_THREAD; clone3 answers ENOSYS (glibc then uses
    // clone).
    p.when(SYS_clone, {stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(0)),
                       jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
                       stmt(BPF_RET | BPF_K, kAllow), stmt(BPF_RET | BPF_K, kRefuse)});
    p.when(SYS_clone3, {stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS)});
    for (long nr : {SYS_fork, SYS_vfork, SYS_execveat, SYS_setsid, SYS_setpgid}) {
      p.refuse(nr);
    }
    // One program: the execve kopt makes, by the address of its path.
    std::size_t at = p.size();
    p.when(SYS_execve,
           {stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(0)), jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3),
            stmt(BPF_LD | BPF_W | BPF_ABS, arg_high(0)), jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
            stmt(BPF_RET | BPF_K, kAllow), stmt(BPF_RET | BPF_K, kRefuse)});
    filter.path_low = at + 2;
    filter.path_high = at + 4;
    // Its stdout and stderr stay kopt's pipes: no dup2 or dup3 onto them, no close of them.
    for (long nr : {SYS_dup2, SYS_dup3}) {
      p.when(nr,
             {stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(1)), jump(BPF_JMP | BPF_JGT | BPF_K, 2, 0, 1),
              stmt(BPF_RET | BPF_K, kAllow), stmt(BPF_RET | BPF_K, kRefuse)});
    }
    p.when(SYS_close,
           {stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(0)), jump(BPF_JMP | BPF_JEQ | BPF_K, 1, 2, 0),
            jump(BPF_JMP | BPF_JEQ | BPF_K, 2, 1, 0), stmt(BPF_RET | BPF_K, kAllow),
            stmt(BPF_RET | BPF_K, kRefuse)});
    p.when(SYS_close_range,
           {stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(0)), jump(BPF_JMP | BPF_JGT | BPF_K, 2, 0, 1),
            stmt(BPF_RET | BPF_K, kAllow), stmt(BPF_RET | BPF_K, kRefuse)});
  }
  p.push(stmt(BPF_RET | BPF_K, kAllow));
  filter.code = std::move(p.code());
}
#endif

PreparedConfinement::PreparedConfinement(const Confinement &confinement)
    : landlock_abi_(landlock_abi()), profiler_(confinement.profiler),
      gpu_runtime_(confinement.gpu_runtime), filter_(std::make_unique<Filter>()) {
  std::vector<std::filesystem::path> paths = confinement.writable;
  paths.emplace_back("/dev");
  if (profiler_) {
    paths.emplace_back("/tmp");
  }
  if (landlock_abi_ > 0) {
    for (const auto &path : paths) {
      int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
      if (fd < 0) {
        for (int open_fd : writable_fds_) {
          ::close(open_fd);
        }
        throw Error("cannot confine a run to " + path.string() + ": " + std::strerror(errno));
      }
      struct stat st {};
      ::fstat(fd, &st);
      writable_fds_.push_back(fd);
      writable_dirs_.push_back(S_ISDIR(st.st_mode));
    }
  }
#if defined(__x86_64__)
  build_filter(*filter_, profiler_);
  summary_ = landlock_abi_ > 0 ? "Landlock ABI " + std::to_string(landlock_abi_) + ", seccomp"
                               : "seccomp; writes not confined (this kernel has no Landlock)";
#else
  summary_ = "not confined: kopt confines runs on x86-64 Linux";
#endif
}

PreparedConfinement::~PreparedConfinement() {
  for (int fd : writable_fds_) {
    ::close(fd);
  }
}

int PreparedConfinement::apply(const char *path) noexcept {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return errno;
  }
  if (landlock_abi_ > 0) {
    RulesetAttr attr{write_rights(landlock_abi_), 0, 0};
    std::size_t size = sizeof attr.handled_access_fs;
    if (landlock_abi_ >= 4) {
      attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
      size += sizeof attr.handled_access_net;
    }
    if (landlock_abi_ >= 6) {
      attr.scoped = kScopeSignal;
      size += sizeof attr.scoped;
    }
    long ruleset = ::syscall(kCreateRuleset, &attr, size, 0);
    if (ruleset < 0) {
      return errno;
    }
    for (std::size_t i = 0; i < writable_fds_.size(); ++i) {
      PathBeneathAttr rule{writable_dirs_[i] ? write_rights(landlock_abi_)
                                             : file_rights(landlock_abi_),
                           writable_fds_[i]};
      if (::syscall(kAddRule, ruleset, kRulePathBeneath, &rule, 0) != 0) {
        return errno;
      }
    }
    if (gpu_runtime_) {
      // Its own threads' folder, opened here, after fork: /proc/self is the child now.
      int task = ::open("/proc/self/task", O_PATH | O_CLOEXEC);
      PathBeneathAttr rule{file_rights(landlock_abi_), task};
      if (task < 0 || ::syscall(kAddRule, ruleset, kRulePathBeneath, &rule, 0) != 0) {
        return errno;
      }
      ::close(task);
    }
    if (::syscall(kRestrictSelf, ruleset, 0) != 0) {
      return errno;
    }
    ::close(static_cast<int>(ruleset));
  }
  if (filter_->code.empty()) {
    return 0;
  }
  // The child's copy of the program (fork copied it): its pid and its path's address in place.
  const auto pid = static_cast<std::uint32_t>(::getpid());
  for (std::size_t at : filter_->self_pid) {
    filter_->code[at].k = pid;
  }
  for (std::size_t at : filter_->minus_pid) {
    filter_->code[at].k = static_cast<std::uint32_t>(-static_cast<std::int64_t>(pid));
  }
  if (filter_->path_low != 0) {
    const auto address = reinterpret_cast<std::uintptr_t>(path);
    filter_->code[filter_->path_low].k = static_cast<std::uint32_t>(address);
    filter_->code[filter_->path_high].k = static_cast<std::uint32_t>(address >> 32);
  }
  sock_fprog program{static_cast<unsigned short>(filter_->code.size()), filter_->code.data()};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) {
    return errno;
  }
  return 0;
}

} // namespace kopt::util
