#include "util/cpu_time.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

namespace kopt::util {

std::optional<MachineCpu> parse_proc_stat(const std::string &text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("cpu ", 0) != 0) {
      continue;
    }
    std::istringstream fields(line.substr(4));
    std::vector<std::uint64_t> n;
    std::uint64_t value = 0;
    while (fields >> value) {
      n.push_back(value);
    }
    if (n.size() < 8) {
      return std::nullopt;
    }
    // user nice system idle iowait irq softirq steal [guest guest_nice]: guest is inside user.
    MachineCpu cpu;
    cpu.busy = n[0] + n[1] + n[2] + n[5] + n[6] + n[7];
    cpu.total = cpu.busy + n[3] + n[4];
    return cpu;
  }
  return std::nullopt;
}

std::optional<MachineCpu> machine_cpu() {
  // A proc file reports no size: read as a stream (its "cpu" line comes first).
  std::ifstream in("/proc/stat");
  std::string line;
  if (!in || !std::getline(in, line)) {
    return std::nullopt;
  }
  return parse_proc_stat(line);
}

double cpu_ticks_per_second() {
  long ticks = sysconf(_SC_CLK_TCK);
  return ticks > 0 ? static_cast<double>(ticks) : 100.0;
}

double own_cpu_seconds() {
  double seconds = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage usage{};
    if (getrusage(who, &usage) == 0) {
      seconds += static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                 static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    }
  }
  return seconds;
}

double others_share(const MachineCpu &before, const MachineCpu &after, double own_seconds,
                    double ticks_per_second) {
  if (after.total <= before.total || after.busy < before.busy) {
    return -1;
  }
  double total = static_cast<double>(after.total - before.total);
  double others = static_cast<double>(after.busy - before.busy) - own_seconds * ticks_per_second;
  return std::clamp(others / total, 0.0, 1.0);
}

} // namespace kopt::util
