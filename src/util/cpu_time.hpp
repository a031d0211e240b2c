#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kopt::util {

/// The machine's CPU time since boot in clock ticks, from /proc/stat's "cpu" line: busy (user,
/// nice, system, irq, softirq and steal; guest time is inside user) and total (busy plus idle and
/// iowait).
struct MachineCpu {
  std::uint64_t busy = 0;
  std::uint64_t total = 0;
};

/// Parses /proc/stat's text; nullopt when it holds no "cpu " line of at least 8 numbers.
std::optional<MachineCpu> parse_proc_stat(const std::string &text);

/// /proc/stat now; nullopt where there is none or it does not parse.
std::optional<MachineCpu> machine_cpu();

/// Clock ticks per second of /proc/stat's counters (sysconf(_SC_CLK_TCK)).
double cpu_ticks_per_second();

/// CPU seconds used so far by this process and by its children that have ended and been waited
/// for (getrusage: user and system time).
double own_cpu_seconds();

/// The share of the machine's CPU time between `before` and `after` that processes other than
/// this one and its children used: (busy - own) / total, with `own_seconds` of this process's
/// and its children's CPU time in between; clamped to [0, 1]. -1 when the total did not advance.
double others_share(const MachineCpu &before, const MachineCpu &after, double own_seconds,
                    double ticks_per_second);

} // namespace kopt::util
