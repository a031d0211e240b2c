#include "kopt/harness/guard.hpp"

#include "guard_proc.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KOPT_GUARD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define KOPT_GUARD_SANITIZED 1
#endif
#endif

#if defined(__linux__) && defined(__x86_64__) && !defined(KOPT_GUARD_SANITIZED)
#define KOPT_GUARD_ON 1
#include <dirent.h>
#include <link.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#endif

namespace kopt::harness {

namespace {

// What kopt refuses and why: kopt's confinement (src/util/confine.cpp) and this guard.
struct Refusal {
  long number;
  const char *name;
  const char *why;
};

#if KOPT_GUARD_ON
constexpr const char *kCpu = "changing the CPU or the scheduling it runs with";
constexpr const char *kOthers = "reaching into another process";
constexpr const char *kSignal = "signalling another process";
constexpr const char *kProcess = "starting a process or another program";
constexpr const char *kMemory =
    "changing the harness's read-only memory (code, constants, vtables)";
constexpr const char *kOutput = "redirecting or closing the harness's output";
constexpr const char *kFacility = "a facility a harness has no use for";

constexpr Refusal kRefusals[] = {
    {SYS_sched_setaffinity, "sched_setaffinity", kCpu},
    {SYS_sched_setscheduler, "sched_setscheduler", kCpu},
    {SYS_sched_setparam, "sched_setparam", kCpu},
    {SYS_sched_setattr, "sched_setattr", kCpu},
    {SYS_setpriority, "setpriority", kCpu},
    {SYS_ptrace, "ptrace", kOthers},
    {SYS_process_vm_readv, "process_vm_readv", kOthers},
    {SYS_process_vm_writev, "process_vm_writev", kOthers},
    {SYS_pidfd_open, "pidfd_open", kOthers},
    {SYS_pidfd_getfd, "pidfd_getfd", kOthers},
    {SYS_kcmp, "kcmp", kOthers},
    {SYS_kill, "kill", kSignal},
    {SYS_tkill, "tkill", kSignal},
    {SYS_tgkill, "tgkill", kSignal},
    {SYS_rt_sigqueueinfo, "rt_sigqueueinfo", kSignal},
    {SYS_rt_tgsigqueueinfo, "rt_tgsigqueueinfo", kSignal},
    {SYS_pidfd_send_signal, "pidfd_send_signal", kSignal},
    {SYS_clone, "clone (a process, not a thread)", kProcess},
    {SYS_fork, "fork", kProcess},
    {SYS_vfork, "vfork", kProcess},
    {SYS_execve, "execve", kProcess},
    {SYS_execveat, "execveat", kProcess},
    {SYS_setsid, "setsid", kProcess},
    {SYS_setpgid, "setpgid", kProcess},
    {SYS_mprotect, "mprotect", kMemory},
    {SYS_pkey_mprotect, "pkey_mprotect", kMemory},
    {SYS_munmap, "munmap", kMemory},
    {SYS_mremap, "mremap", kMemory},
    {SYS_mmap, "mmap (MAP_FIXED)", kMemory},
    {SYS_shmat, "shmat (SHM_REMAP)", kMemory},
    {SYS_rt_sigaction, "rt_sigaction (SIGSYS)", "replacing the handler that names refused calls"},
    {SYS_dup2, "dup2", kOutput},
    {SYS_dup3, "dup3", kOutput},
    {SYS_close, "close", kOutput},
    {SYS_close_range, "close_range", kOutput},
    {SYS_unshare, "unshare", kFacility},
    {SYS_setns, "setns", kFacility},
    {SYS_io_uring_setup, "io_uring_setup", kFacility},
    {SYS_userfaultfd, "userfaultfd", kFacility},
    {SYS_bpf, "bpf", kFacility},
};

const Refusal *find_refusal(long number) {
  for (const Refusal &r : kRefusals) {
    if (r.number == number) {
      return &r;
    }
  }
  return nullptr;
}

void write_text(const char *text) { (void)!::write(2, text, std::strlen(text)); }

// SIGSYS from a refused call: names it on stderr and ends the process (async-signal-safe).
void on_refused(int, siginfo_t *info, void *) {
  const Refusal *r = find_refusal(info->si_syscall);
  char number[24];
  int n = 0;
  for (long v = info->si_syscall; n == 0 || v > 0; v /= 10) {
    number[n++] = static_cast<char>('0' + v % 10);
  }
  char digits[24];
  for (int i = 0; i < n; ++i) {
    digits[i] = number[n - 1 - i];
  }
  digits[n] = '\0';
  write_text("\n");
  write_text(kRefusedPrefix);
  write_text(r ? r->name : "system call ");
  if (!r) {
    write_text(digits);
  }
  write_text(": ");
  write_text(r ? r->why : "refused by kopt's confinement");
  write_text("\n");
  ::syscall(SYS_exit_group, kRefusedExit);
}

// A seccomp program under construction, with forward jumps by label.
class Bpf {
public:
  void add(sock_filter f) { code_[size_++] = f; }
  void stmt(std::uint16_t c, std::uint32_t k) { add(BPF_STMT(c, k)); }
  void jump(std::uint16_t c, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
    add(BPF_JUMP(c, k, jt, jf));
  }
  // An unconditional jump to `label`, set by place(label) later.
  void jump_to(int label) {
    fixups_[fixup_count_][0] = size_;
    fixups_[fixup_count_++][1] = label;
    stmt(BPF_JMP | BPF_JA, 0);
  }
  void place(int label) { labels_[label] = size_; }
  // `code` when the call is `nr`: `JEQ nr; JA label`.
  void on(long nr, int label) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1);
    jump_to(label);
  }
  bool full(std::size_t more) const { return size_ + more > kMax; }
  sock_fprog finish() {
    for (std::size_t i = 0; i < fixup_count_; ++i) {
      std::size_t at = fixups_[i][0];
      code_[at].k = static_cast<std::uint32_t>(labels_[fixups_[i][1]] - at - 1);
    }
    return {static_cast<unsigned short>(size_), code_};
  }

private:
  static constexpr std::size_t kMax = 4096;
  sock_filter code_[kMax];
  std::size_t size_ = 0;
  std::size_t labels_[8] = {};
  std::size_t fixups_[16][2] = {};
  std::size_t fixup_count_ = 0;
};

constexpr std::uint32_t arg_low(int i) {
  return static_cast<std::uint32_t>(offsetof(seccomp_data, args) + 8 * i);
}
constexpr std::uint32_t arg_high(int i) { return arg_low(i) + 4; }
constexpr std::uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr std::uint32_t kRefuse = SECCOMP_RET_TRAP;

struct Range {
  std::uintptr_t low, high;
};

constexpr std::size_t kMaxRanges = 300;
Range ranges[kMaxRanges];
std::size_t range_count = 0;
char maps[1 << 18];

// Reads the mappings that are read-only now (no 'w') from /proc/self/maps, adjacent ones merged;
// false when they cannot be read or a mapping is writable and executable at once (W^X).
bool read_only_ranges(const char **why) {
  int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *why = "cannot read /proc/self/maps";
    return false;
  }
  std::size_t used = 0;
  ssize_t got = 0;
  while (used + 1 < sizeof maps && (got = ::read(fd, maps + used, sizeof maps - 1 - used)) > 0) {
    used += static_cast<std::size_t>(got);
  }
  ::close(fd);
  maps[used] = '\0';
  range_count = 0;
  for (char *line = maps; *line;) {
    char *end = std::strchr(line, '\n');
    if (end) {
      *end = '\0';
    }
    char *rest = nullptr;
    std::uintptr_t low = std::strtoull(line, &rest, 16);
    std::uintptr_t high = std::strtoull(rest + 1, &rest, 16);
    const char *perms = rest + 1;
    bool writable = perms[1] == 'w';
    if (writable && perms[2] == 'x') {
      *why = "a mapping is writable and executable";
      return false;
    }
    // What the guard keeps: the read-only mappings of programs and libraries (code, constants,
    // RELRO) and the kernel's vDSO; not reserved gaps (no access), device files (a GPU driver
    // maps and unmaps its own) or anonymous memory.
    const char *name = std::strchr(perms, '/');
    bool from_file =
        name && std::strncmp(name, "/dev/", 5) != 0 && std::strstr(name, " (deleted)") == nullptr;
    bool vdso = std::strstr(perms, "[vdso]") != nullptr || std::strstr(perms, "[vvar]") != nullptr;
    bool inaccessible = perms[0] == '-' && perms[2] == '-';
    if (!writable && (from_file || vdso) && !inaccessible) {
      if (range_count > 0 && ranges[range_count - 1].high == low) {
        ranges[range_count - 1].high = high;
      } else if (range_count < kMaxRanges) {
        ranges[range_count++] = {low, high};
      } else {
        *why = "too many read-only mappings";
        return false;
      }
    }
    line = end ? end + 1 : line + std::strlen(line);
  }
  return true;
}

// Whether [low, high) lies inside the read-only ranges read last.
bool read_only(std::uintptr_t low, std::uintptr_t high) {
  for (std::size_t i = 0; i < range_count; ++i) {
    if (ranges[i].low <= low && high <= ranges[i].high) {
      return true;
    }
  }
  return false;
}

// Whether the executable mappings that come from files hold their files' bytes: code patched in
// memory before the guard (by a static constructor, after a library was loaded) is refused. Sets
// `which` to the first file that differs.
bool code_as_in_files(const char **which) {
  static char path[4096];
  static char file_bytes[1 << 16];
  int maps_fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (maps_fd < 0) {
    return true;
  }
  std::size_t used = 0;
  ssize_t got = 0;
  while (used + 1 < sizeof maps &&
         (got = ::read(maps_fd, maps + used, sizeof maps - 1 - used)) > 0) {
    used += static_cast<std::size_t>(got);
  }
  ::close(maps_fd);
  maps[used] = '\0';
  for (char *line = maps; *line;) {
    char *end = std::strchr(line, '\n');
    if (end) {
      *end = '\0';
    }
    char *rest = nullptr;
    std::uintptr_t low = std::strtoull(line, &rest, 16);
    std::uintptr_t high = std::strtoull(rest + 1, &rest, 16);
    const char *perms = rest + 1;
    unsigned long long offset = std::strtoull(perms + 5, &rest, 16);
    const char *name = std::strchr(rest, '/');
    bool deleted = std::strstr(rest, " (deleted)") != nullptr;
    if (perms[2] == 'x' && name && !deleted) {
      std::strncpy(path, name, sizeof path - 1);
      int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      for (std::uintptr_t at = low; fd >= 0 && at < high;) {
        std::size_t want = std::min<std::uintptr_t>(sizeof file_bytes, high - at);
        ssize_t n = ::pread(fd, file_bytes, want, static_cast<off_t>(offset + (at - low)));
        if (n <= 0) {
          break; // the mapping runs past the file's end: zeros the file does not hold
        }
        if (std::memcmp(file_bytes, reinterpret_cast<const void *>(at),
                        static_cast<std::size_t>(n)) != 0) {
          ::close(fd);
          *which = path;
          return false;
        }
        at += static_cast<std::uintptr_t>(n);
      }
      if (fd >= 0) {
        ::close(fd);
      }
    }
    line = end ? end + 1 : line + std::strlen(line);
  }
  return true;
}

// Each loaded object's segments that its file says are read-only (PT_LOAD without PF_W, and
// PT_GNU_RELRO) are read-only now: nothing made them writable before the guard.
int check_segments(dl_phdr_info *info, std::size_t, void *bad) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    bool fixed = (ph.p_type == PT_LOAD && !(ph.p_flags & PF_W)) || ph.p_type == PT_GNU_RELRO;
    if (!fixed || ph.p_memsz == 0) {
      continue;
    }
    const std::uintptr_t page = 4096;
    std::uintptr_t low = (info->dlpi_addr + ph.p_vaddr) & ~(page - 1);
    std::uintptr_t high = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
    if (ph.p_type == PT_GNU_RELRO) {
      high &= ~(page - 1); // the loader protects the whole pages only
    }
    if (high > low && !read_only(low, high)) {
      *static_cast<const char **>(bad) = info->dlpi_name;
      return 1;
    }
  }
  return 0;
}

// Refuses, for system calls whose (address, length) are arguments 0 and 1, any that touches a
// read-only range: [a, a + n) overlaps [low, high) when a < high and a + n > low, in 64 bits.
void emit_range_check(Bpf &p) {
  p.stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(0));
  p.stmt(BPF_ST, 0);
  p.stmt(BPF_LD | BPF_W | BPF_ABS, arg_high(0));
  p.stmt(BPF_ST, 1);
  p.stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(1));
  p.stmt(BPF_LDX | BPF_MEM, 0);
  p.stmt(BPF_ALU | BPF_ADD | BPF_X, 0);
  p.stmt(BPF_ST, 2);                          // end, low word
  p.jump(BPF_JMP | BPF_JGE | BPF_X, 0, 2, 0); // no carry
  p.stmt(BPF_LD | BPF_IMM, 1);
  p.stmt(BPF_JMP | BPF_JA, 1);
  p.stmt(BPF_LD | BPF_IMM, 0);
  p.stmt(BPF_ST, 4); // the carry
  p.stmt(BPF_LD | BPF_W | BPF_ABS, arg_high(1));
  p.stmt(BPF_LDX | BPF_MEM, 1);
  p.stmt(BPF_ALU | BPF_ADD | BPF_X, 0);
  p.stmt(BPF_LDX | BPF_MEM, 4);
  p.stmt(BPF_ALU | BPF_ADD | BPF_X, 0);
  p.stmt(BPF_ST, 3); // end, high word
  for (std::size_t i = 0; i < range_count; ++i) {
    const auto high_hi = static_cast<std::uint32_t>(ranges[i].high >> 32);
    const auto high_lo = static_cast<std::uint32_t>(ranges[i].high);
    const auto low_hi = static_cast<std::uint32_t>(ranges[i].low >> 32);
    const auto low_lo = static_cast<std::uint32_t>(ranges[i].low);
    p.stmt(BPF_LD | BPF_MEM, 1);                      // 0: a, high word
    p.jump(BPF_JMP | BPF_JGT | BPF_K, high_hi, 9, 0); // 1: a >= high: next range
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, high_hi, 0, 2); // 2: less in the high word: a < high
    p.stmt(BPF_LD | BPF_MEM, 0);                      // 3
    p.jump(BPF_JMP | BPF_JGE | BPF_K, high_lo, 6, 0); // 4: a >= high: next range
    p.stmt(BPF_LD | BPF_MEM, 3);                      // 5: end, high word
    p.jump(BPF_JMP | BPF_JGT | BPF_K, low_hi, 3, 0);  // 6: end > low: refuse
    p.jump(BPF_JMP | BPF_JEQ | BPF_K, low_hi, 0, 3);  // 7: less: next range
    p.stmt(BPF_LD | BPF_MEM, 2);                      // 8
    p.jump(BPF_JMP | BPF_JGT | BPF_K, low_lo, 0, 1);  // 9: end > low: refuse, else next
    p.stmt(BPF_RET | BPF_K, kRefuse);                 // 10
  }
  p.stmt(BPF_RET | BPF_K, kAllow);
}

Bpf program;

// Installs the filter over the ranges read last; returns "" or why it could not.
const char *install_filter() {
  enum { kRange, kMmap, kMremap };
  Bpf &p = program;
  p = Bpf{};
  if (p.full(64 + 11 * range_count)) {
    return "too many read-only ranges for one filter";
  }
  p.stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
  p.jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
  p.stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  p.stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
  p.on(SYS_mprotect, kRange);
  p.on(SYS_pkey_mprotect, kRange);
  p.on(SYS_munmap, kRange);
  p.on(SYS_mmap, kMmap);
  p.on(SYS_mremap, kMremap);
  // shmat(SHM_REMAP) replaces what is mapped; process_vm_writev writes another's memory or its own.
  p.jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_shmat, 0, 4);
  p.stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(2));
  p.jump(BPF_JMP | BPF_JSET | BPF_K, SHM_REMAP, 0, 1);
  p.stmt(BPF_RET | BPF_K, kRefuse);
  p.stmt(BPF_RET | BPF_K, kAllow);
  p.jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 0, 1);
  p.stmt(BPF_RET | BPF_K, kRefuse);
  // No handler of SIGSYS but this one: rt_sigaction(SIGSYS, act != NULL) is refused.
  p.jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigaction, 0, 8);
  p.stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(0));
  p.jump(BPF_JMP | BPF_JEQ | BPF_K, SIGSYS, 0, 5);
  p.stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(1));
  p.jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2);
  p.stmt(BPF_LD | BPF_W | BPF_ABS, arg_high(1));
  p.jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
  p.stmt(BPF_RET | BPF_K, kRefuse);
  p.stmt(BPF_RET | BPF_K, kAllow); // rt_sigaction of another signal, or a query
  p.stmt(BPF_RET | BPF_K, kAllow); // every other call
  // mremap: never to a fixed address; mmap: only MAP_FIXED replaces a mapping.
  p.place(kMremap);
  p.stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(3));
  p.jump(BPF_JMP | BPF_JSET | BPF_K, MREMAP_FIXED | 4 /* MREMAP_DONTUNMAP */, 0, 1);
  p.stmt(BPF_RET | BPF_K, kRefuse);
  p.jump_to(kRange);
  p.place(kMmap);
  p.stmt(BPF_LD | BPF_W | BPF_ABS, arg_low(3));
  p.jump(BPF_JMP | BPF_JSET | BPF_K, MAP_FIXED, 1, 0);
  p.stmt(BPF_RET | BPF_K, kAllow);
  p.place(kRange);
  emit_range_check(p);
  sock_fprog fprog = p.finish();
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0) {
    return "seccomp refused the filter";
  }
  return "";
}

// Stops the harness before any candidate code runs: a guard that cannot be set is a refusal.
[[noreturn]] void refuse_start(const char *why, const char *detail) {
  write_text(kRefusedPrefix);
  write_text("the harness's guard: ");
  write_text(why);
  if (detail && *detail) {
    write_text(" (");
    write_text(detail);
    write_text(")");
  }
  write_text("\n");
  ::syscall(SYS_exit_group, kRefusedExit);
  __builtin_unreachable();
}

// The guard's own step before any other code of the executable (a candidate's static
// constructors included) runs: its handler of refusals, then the filter over what is read-only.
extern "C" void (*__preinit_array_start[])(int, char **, char **) __attribute__((weak));
extern "C" void (*__preinit_array_end[])(int, char **, char **) __attribute__((weak));

// The handler that names a refused call (before the filter that would refuse replacing it).
void install_handler() {
  static bool installed = false; // once: a filter in place refuses a second rt_sigaction(SIGSYS)
  if (installed) {
    return;
  }
  installed = true;
  struct sigaction action {};
  action.sa_sigaction = on_refused;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGSYS, &action, nullptr);
}

// Whether `envp` holds KOPT_GUARD=1: before constructors run, glibc has not set environ yet, so
// getenv() finds nothing here.
bool guard_in(char **envp) {
  const std::size_t n = std::strlen(kGuardVariable);
  for (char **e = envp; e && *e; ++e) {
    if (std::strncmp(*e, kGuardVariable, n) == 0 && std::strcmp(*e + n, "=1") == 0) {
      return true;
    }
  }
  return false;
}

// The main executable's dynamic section: whether it binds every symbol at load (its GOT then
// lies in RELRO), and whether it holds IFUNC relocations (their resolvers run during loading,
// before the guard, while RELRO data is still writable).
struct Binding {
  bool now = false;
  bool ifunc = false;
};

// A dynamic entry's address in memory: the loader adds the load address to most of them in
// place; one it left as an offset is added here.
std::uintptr_t loaded(const dl_phdr_info *info, std::uintptr_t address) {
  return address < info->dlpi_addr ? address + info->dlpi_addr : address;
}

int executable_binding(dl_phdr_info *info, std::size_t, void *out) {
  Binding &b = *static_cast<Binding *>(out);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) {
      continue;
    }
    const auto *dyn =
        reinterpret_cast<const ElfW(Dyn) *>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    const ElfW(Rela) * tables[2] = {nullptr, nullptr};
    std::size_t sizes[2] = {0, 0};
    for (; dyn->d_tag != DT_NULL; ++dyn) {
      switch (dyn->d_tag) {
      case DT_BIND_NOW:
        b.now = true;
        break;
      case DT_FLAGS:
        b.now = b.now || (dyn->d_un.d_val & DF_BIND_NOW);
        break;
      case DT_FLAGS_1:
        b.now = b.now || (dyn->d_un.d_val & DF_1_NOW);
        break;
      case DT_RELA:
        tables[0] = reinterpret_cast<const ElfW(Rela) *>(loaded(info, dyn->d_un.d_ptr));
        break;
      case DT_RELASZ:
        sizes[0] = dyn->d_un.d_val;
        break;
      case DT_JMPREL:
        tables[1] = reinterpret_cast<const ElfW(Rela) *>(loaded(info, dyn->d_un.d_ptr));
        break;
      case DT_PLTRELSZ:
        sizes[1] = dyn->d_un.d_val;
        break;
      }
    }
    for (int t = 0; t < 2; ++t) {
      for (std::size_t r = 0; tables[t] && r < sizes[t] / sizeof(ElfW(Rela)); ++r) {
        b.ifunc = b.ifunc || ELF64_R_TYPE(tables[t][r].r_info) == R_X86_64_IRELATIVE;
      }
    }
  }
  return 1; // the first object is the main executable: that one only
}

void guard_at_start(int, char **, char **envp) {
  if (!guard_in(envp)) {
    return;
  }
  install_handler();
  if (__preinit_array_end - __preinit_array_start > 1) {
    refuse_start("another .preinit_array function runs before it", "");
  }
  Binding binding;
  ::dl_iterate_phdr(executable_binding, &binding);
  if (!binding.now) {
    refuse_start("the executable binds its symbols lazily (link it with -z now): its GOT would "
                 "stay writable",
                 "");
  }
  if (binding.ifunc) {
    refuse_start("the executable holds IFUNC relocations: their resolvers ran before it", "");
  }
  const char *which = nullptr;
  if (!code_as_in_files(&which)) {
    refuse_start("code in memory differs from its file (patched before the guard)", which);
  }
  const char *why = "";
  if (!read_only_ranges(&why)) {
    refuse_start(why, "");
  }
  const char *object = nullptr;
  if (::dl_iterate_phdr(check_segments, &object) != 0) {
    refuse_start("an object's read-only segment was made writable before it",
                 object && *object ? object : "the executable");
  }
  if (const char *failed = install_filter(); *failed) {
    refuse_start(failed, "");
  }
}

#ifndef KOPT_GUARD_IN_LIBRARY // a shared library (the tracer) has no .preinit_array
__attribute__((section(".preinit_array"),
               used)) void (*const kopt_guard_entry)(int, char **, char **) = guard_at_start;
#endif

#endif

} // namespace

bool guard_on() {
  const char *value = std::getenv(kGuardVariable);
  return value && std::strcmp(value, "1") == 0;
}

std::string guard_memory() {
#if KOPT_GUARD_ON
  if (!guard_on()) {
    return "not guarded (" + std::string(kGuardVariable) + " is not 1)";
  }
  install_handler();
  const char *which = nullptr;
  if (const char *failed = detail::close_proc(); *failed) {
    refuse_start(failed, "");
  }
  if (detail::holds_proc_mem(&which)) {
    refuse_start("a descriptor of a /proc mem file is open", which);
  }
  if (!code_as_in_files(&which)) {
    refuse_start("code in memory differs from its file (patched before the guard)", which);
  }
  const char *why = "";
  if (!read_only_ranges(&why)) {
    refuse_start(why, "");
  }
  const char *object = nullptr;
  if (::dl_iterate_phdr(check_segments, &object) != 0) {
    refuse_start("an object's read-only segment was made writable before the guard",
                 object && *object ? object : "the executable");
  }
  if (const char *failed = install_filter(); *failed) {
    refuse_start(failed, "");
  }
  return "guarded " + std::to_string(range_count) + " read-only ranges";
#else
  return "not guarded (x86-64 Linux without sanitizers only)";
#endif
}

std::string refused_call(long number) {
#if KOPT_GUARD_ON
  if (const Refusal *r = find_refusal(number)) {
    return std::string(r->name) + ": " + r->why;
  }
#else
  (void)number;
#endif
  return "";
}

} // namespace kopt::harness
