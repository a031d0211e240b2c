#include "cli/commands.hpp"

#include "cli/subcommands.hpp"

namespace kopt::cli {

std::span<const Subcommand> subcommands() {
  static const Subcommand table[] = {
      {"version", "print kopt's version", setup_version},
  };
  return table;
}

} // namespace kopt::cli
