#include "cli/commands.hpp"

#include "cli/subcommands.hpp"

namespace kopt::cli {

std::span<const Subcommand> subcommands() {
  static const Subcommand table[] = {
      {"bench", "run a candidate's harness on the family's configs -> measurement.json",
       setup_bench},
      {"check", "the correctness test: identity, hash and every err == 0 against the golden",
       setup_check},
      {"gen-instances", "generate each candidate's instance TUs, registry, dispatch and manifest",
       setup_gen_instances},
      {"launch-compile",
       "compiler launcher: compile from the candidate's folder so ccache shares hits",
       setup_launch_compile},
      {"version", "print kopt's version", setup_version},
  };
  return table;
}

} // namespace kopt::cli
