#pragma once

#include "cli/cli.hpp"

#include <span>

namespace kopt::cli {

/// The subcommand table: every `kopt` subcommand, in the order `kopt --help` lists them.
std::span<const Subcommand> subcommands();

} // namespace kopt::cli
