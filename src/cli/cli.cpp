#include "cli/cli.hpp"

#include "cli/commands.hpp"
#include "cli/number_options.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/json_file.hpp"
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
      ->check(finite_number(0, 1))
      ->capture_default_str();
}

namespace {

// `kopt capture merge ... --json`: a nested subcommand takes --json too, for the same flag.
void add_json_to_nested(CLI::App &app, bool &json) {
  for (CLI::App *nested : app.get_subcommands([](CLI::App *) { return true; })) {
    if (nested->get_option_no_throw("--json") == nullptr) {
      nested->add_flag("--json", json, "print a machine-readable JSON result instead of text");
    }
    add_json_to_nested(*nested, json);
  }
}

// Every long option name of `app`, and of its nested subcommands with `Nested::yes`.
enum class Nested { no, yes };
void long_names(const CLI::App &app, Nested nested, std::vector<std::string> &names) {
  for (const CLI::Option *option : app.get_options()) {
    for (const std::string &name : option->get_lnames()) {
      names.push_back("--" + name);
    }
  }
  for (const CLI::App *sub : app.get_subcommands([](const CLI::App *) { return true; })) {
    if (nested == Nested::yes) {
      long_names(*sub, nested, names);
    }
  }
}

// The first `--option` of the command line that the chosen subcommand does not know, or "".
// CLI11 reports a missing required option before an unknown one, which hides a typo.
std::string unknown_option(const CLI::App &app, int argc, char **argv,
                           std::vector<std::string> &known) {
  if (argc < 2) {
    return "";
  }
  const CLI::App *sub = nullptr;
  for (const CLI::App *candidate : app.get_subcommands([](const CLI::App *) { return true; })) {
    sub = candidate->get_name() == argv[1] ? candidate : sub;
  }
  if (sub == nullptr) {
    return "";
  }
  long_names(app, Nested::no, known);
  long_names(*sub, Nested::yes, known);
  for (int i = 2; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--") {
      break; // what follows is another program's command line (launch-compile)
    }
    if (word.rfind("--", 0) != 0) {
      continue;
    }
    word = word.substr(0, word.find('='));
    if (std::find(known.begin(), known.end(), word) == known.end()) {
      return word;
    }
  }
  return "";
}

// A usage error: help and --version as CLI11 prints them, anything else as kopt's own error
// (exit 2) naming the subcommand and the option at fault.
int usage_error(CLI::App &app, const CLI::ParseError &e, int argc, char **argv) {
  if (e.get_exit_code() == 0) {
    return app.exit(e);
  }
  std::string where = argc > 1 && argv[1][0] != '-' ? std::string(argv[1]) + ": " : "";
  std::vector<std::string> known;
  std::string unknown = unknown_option(app, argc, argv, known);
  std::string message = e.what();
  if (!unknown.empty()) {
    std::string hint = util::nearest(unknown, known);
    message =
        "unknown option '" + unknown + "'" + (hint.empty() ? "" : ", did you mean '" + hint + "'?");
  }
  if (std::find(argv + 1, argv + argc, std::string("--json")) != argv + argc) {
    std::cout << util::dump_json(nlohmann::json{{"error", where + message}}) << "\n";
  }
  std::cerr << "kopt: error: " << where << message << "\n";
  std::cerr << "run 'kopt " << (where.empty() ? "" : std::string(argv[1]) + " ")
            << "--help' for its options\n";
  return 2;
}

} // namespace

void add_quiet_option(CLI::App &app, bool &quiet) {
  app.add_flag("--quiet,-q", quiet,
               "no progress: neither the status line on a terminal nor the progress lines");
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
    add_json_to_nested(*sub, *json);
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
    return usage_error(app, e, argc, argv);
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
          std::cout << util::dump_json(nlohmann::json{{"status", "interrupted"},
                                                      {"signal", util::signal_name(e.signal())},
                                                      {"message", e.what()}})
                    << "\n";
        }
        std::cerr << "kopt: interrupted: " << e.what() << "\n";
        return 128 + e.signal();
      } catch (const Error &e) {
        if (context.json) { // --json answers in JSON, an error too
          std::cout << util::dump_json(nlohmann::json{{"error", e.what()}}) << "\n";
        }
        std::cerr << "kopt: error: " << e.what() << "\n";
        return 2;
      } catch (const std::exception &e) {
        // A reader that let another exception through (a file system error, a JSON library
        // error) is a bug to fix where it reads, but never an abort: the same exit as an Error,
        // in JSON too under --json.
        std::string message = entry.app->get_name() + ": " + e.what();
        if (context.json) {
          std::cout << util::dump_json(nlohmann::json{{"error", message}}) << "\n";
        }
        std::cerr << "kopt: error: " << message << "\n";
        return 2;
      }
    }
  }
  return 2;
}

} // namespace kopt::cli
