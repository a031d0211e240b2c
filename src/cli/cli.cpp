#include "cli/cli.hpp"

#include "cli/commands.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

namespace kopt::cli {

void add_ties_option(CLI::App &app, double &ties) {
  app.add_option("--ties", ties,
                 "tuned choice: kernels within (1+ties) x a shape's fastest are tied, and the one "
                 "within the ties on the most shapes wins (0: the plain argmin)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
}

int main(int argc, char **argv) {
  CLI::App app{"kopt: GPU kernel optimisation as a build (families, candidates, verdicts)", "kopt"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kopt ") + KOPT_VERSION);

  struct Entry {
    CLI::App *app;
    Handler handler;
    std::shared_ptr<bool> json;
  };
  std::vector<Entry> entries;
  std::vector<std::string> names;
  for (const Subcommand &row : subcommands()) {
    CLI::App *sub = app.add_subcommand(row.name, row.description);
    auto json = std::make_shared<bool>(false);
    sub->add_flag("--json", *json, "print a machine-readable JSON result instead of text");
    entries.push_back({sub, row.setup(*sub), json});
    names.emplace_back(row.name);
  }

  if (argc > 1 && argv[1][0] != '-' &&
      std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    std::string hint = util::nearest(argv[1], names);
    std::cerr << "kopt: error: unknown subcommand '" << argv[1] << "'"
              << (hint.empty() ? "" : ", did you mean '" + hint + "'?") << "\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help answers 0; every usage error is 2, the status of any other kopt error, so that a
    // script tells "did not run" from a verdict's status.
    return app.exit(e) == 0 ? 0 : 2;
  }

  util::install_interrupt_handlers();
  for (auto &entry : entries) {
    if (entry.app->parsed()) {
      Context context{std::cout, std::cerr, *entry.json};
      try {
        int rc = entry.handler(context);
        util::throw_if_interrupted(entry.app->get_name()); // arrived inside a ledger update
        return rc;
      } catch (const util::Interrupted &e) {
        // Never a verdict: the step did not finish, and nothing it would have written was.
        if (context.json) {
          std::cout << nlohmann::json{{"status", "interrupted"},
                                      {"signal", util::signal_name(e.signal())},
                                      {"message", e.what()}}
                           .dump(2)
                    << "\n";
        }
        std::cerr << "kopt: interrupted: " << e.what() << "\n";
        return 128 + e.signal();
      } catch (const Error &e) {
        std::cerr << "kopt: error: " << e.what() << "\n";
        return 2;
      } catch (const std::exception &e) {
        // A reader that let another exception through (a file system error, a JSON library
        // error) is a bug to fix where it reads, but never an abort: the same exit as an Error.
        std::cerr << "kopt: error: " << entry.app->get_name() << ": " << e.what() << "\n";
        return 2;
      }
    }
  }
  return 2;
}

} // namespace kopt::cli
