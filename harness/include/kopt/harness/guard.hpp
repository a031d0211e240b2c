#pragma once

// The harness's guard of its own memory. A candidate's code runs inside the harness process, so
// kopt runs every harness confined (no new processes, no change of CPU, writes only to its round
// folder), and the harness, before any candidate code runs (.preinit_array), makes the memory
// that is read-only then (code, constants, vtables, the libraries' too) read-only for good: a
// seccomp filter refuses mprotect, munmap, mremap and mmap(MAP_FIXED) on it. A refused call
// raises SIGSYS; the harness's handler writes `kopt-refused: <call>: <why>` to stderr and exits.

#include <string>

namespace kopt::harness {

/// The environment variable kopt sets to 1 for a harness it runs: only then does the harness
/// guard itself (a harness run by hand, or a unit test linking this library, is left alone).
inline constexpr const char *kGuardVariable = "KOPT_GUARD";

/// The exit status of a harness stopped by a refused call.
inline constexpr int kRefusedExit = 86;

/// The line prefix of a refusal on stderr.
inline constexpr const char *kRefusedPrefix = "kopt-refused: ";

/// True when kopt runs this harness guarded (KOPT_GUARD=1).
bool guard_on();

/// Makes the memory that is read-only now read-only for the rest of the process (where the
/// guard is on: KOPT_GUARD=1, x86-64 Linux, no sanitizer), so that code loaded since the start
/// (a GPU runtime, the tracer) is covered too. Returns what it did, for the log ("guarded 14
/// ranges"), or why it did nothing.
std::string guard_memory();

/// The name of system call `number` as a refusal names it ("sched_setaffinity"), and why kopt
/// refuses it; "" for a call kopt does not refuse.
std::string refused_call(long number);

} // namespace kopt::harness
