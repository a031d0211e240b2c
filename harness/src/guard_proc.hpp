#pragma once

// The guard's hold on /proc (guard.cpp): the writes a GPU runtime needed while it started are
// taken away once it is up.

namespace kopt::harness::detail {

/// Adds a Landlock layer that leaves every folder of / but /proc as writable as it was; returns
/// "" (also where the kernel has no Landlock) or why it could not.
const char *close_proc();

/// True when the process holds a descriptor of a /proc mem file; sets `which` to its path.
bool holds_proc_mem(const char **which);

} // namespace kopt::harness::detail
