#pragma once

#include <functional>
#include <iosfwd>

namespace CLI {
class App;
}

namespace kopt::cli {

/// What every subcommand's handler gets: where to print and whether --json was given.
struct Context {
  std::ostream &out;
  std::ostream &err;
  bool json = false;
};

/// A subcommand's handler: runs it and returns the process exit status.
using Handler = std::function<int(Context &)>;

/// One row of the subcommand table: `setup` adds the subcommand's options to `app` (binding
/// them to state it owns) and returns the handler that runs it.
struct Subcommand {
  const char *name;
  const char *description;
  Handler (*setup)(CLI::App &app);
};

/// Adds `--ties R` (the tuned choice's tie slack, docs/FORMATS.md), shared by `kopt tune` and
/// `kopt heuristic fit/eval`, bound to `ties`.
void add_ties_option(CLI::App &app, double &ties);

/// Adds `--quiet` (no progress lines or status line) to `app`, bound to `quiet`.
void add_quiet_option(CLI::App &app, bool &quiet);

/// Runs the kopt CLI: parses argv against the subcommand table, runs the chosen handler, and
/// prints `kopt: error: <message>` (exit 2) for a kopt::Error.
int main(int argc, char **argv);

} // namespace kopt::cli
