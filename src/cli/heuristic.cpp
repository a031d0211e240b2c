#include "cli/number_options.hpp"
#include "cli/subcommands.hpp"
#include "heuristic/fit.hpp"
#include "spec/family.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/read_file.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <cmath>
#include <fstream>
#include <memory>
#include <ostream>

namespace kopt::cli {

namespace {

struct HeuristicOptions {
  std::string results;
  std::string out;
  std::string heuristic;
  std::string spec;
  std::string default_kernel;
  std::string features = "M,N,K,M*N";
  std::string holdout;
  double holdout_frac = 0;
  double holdout_seeded = 0;
  uint64_t seed = 1;
  std::string group;
  std::string label = "kernelName";
  size_t misses = 0;
  double ties = 0;
  heuristic::FitOptions fit;
  bool json = false; ///< --json after fit / eval (the parent's flag comes before them)
  CLI::App *fit_app = nullptr;
  CLI::App *eval_app = nullptr;
};

void add_fit_options(CLI::App &app, HeuristicOptions &o) {
  app.add_flag("--json", o.json, "print a machine-readable JSON result instead of text");
  app.add_option("--max-arms", o.fit.max_arms, "the most rules")
      ->check(whole_number(1))
      ->capture_default_str();
  app.add_option("--features", o.features,
                 "comma-separated features: columns, A*B, fill(BMxBN,C), waves(BMxBN,C), X/Y "
                 "(docs/FORMATS.md)")
      ->capture_default_str();
  app.add_option("--min-leaf", o.fit.min_leaf, "the fewest shapes behind a rule")
      ->check(whole_number(1))
      ->capture_default_str();
  app.add_option("--within", o.fit.within,
                 "fit to the slowdown beyond this slack of the tuned time (0.02: a kernel within "
                 "2% is a hit, as eval's within match scores it with --ties 0.02; best-first tree "
                 "only); 0: tie-slack cost")
      ->check(finite_number(0, 1))
      ->capture_default_str();
  add_ties_option(app, o.ties);
}

// --results, --group and --label: the table, in either format.
void add_results_options(CLI::App &app, HeuristicOptions &o, CLI::Option *holdout) {
  auto *results = app.add_option("--results", o.results,
                                 "kopt tune's full.csv, or an aiter tuned CSV (winners only: "
                                 "gfx,cu_num,M,N,K,...,kernelName,...)")
                      ->required();
  if (holdout) {
    // Given before --help, the table says what a group of it is (CLI11 runs option callbacks
    // before it answers --help).
    results->each([holdout](const std::string &file) {
      if (!util::why_not_regular(file).empty()) {
        return; // a FIFO or a device is never opened; the handler reports it
      }
      std::ifstream in(file);
      std::string header;
      if (!std::getline(in, header)) {
        return; // the handler reports an unreadable table
      }
      try {
        util::CsvTable head = util::parse_csv(header, file);
        std::vector<std::string> columns = heuristic::config_columns(head);
        std::erase(columns, "M");
        holdout->description(holdout->get_description() + "; a group of " + file + " is " +
                             util::join(columns, ",") +
                             (head.find_column("kernelName") >= 0 ? " within its --group" : ""));
      } catch (const Error &) { // so does a header of neither format
      }
    });
  }
  app.add_option("--group", o.group,
                 "aiter tables: the (gfx, cu_num) group to read, e.g. 'gfx942,304' (one heuristic "
                 "per group; needed when the table holds several)");
  app.add_option("--label", o.label,
                 "aiter tables: what names a kernel, kernelName or kernelName+splitK")
      ->check(CLI::IsMember({"kernelName", "kernelName+splitK"}))
      ->capture_default_str();
}

// The family's instance names when --spec is given: every kernel the table names must be one.
void check_family(const HeuristicOptions &o, const heuristic::Results &results) {
  if (o.spec.empty()) {
    return;
  }
  spec::Family family = spec::load_family(o.spec);
  std::vector<std::string> names;
  for (const auto &instance : family.instances) {
    names.push_back(instance.name);
  }
  heuristic::check_instances(results, names, family.name);
}

std::string default_kernel(const HeuristicOptions &o, const heuristic::Results &results) {
  if (!o.default_kernel.empty()) {
    return o.default_kernel;
  }
  if (!o.spec.empty()) {
    return spec::load_family(o.spec).default_kernel;
  }
  if (results.winners_only) {
    return heuristic::most_frequent(results);
  }
  throw Error("heuristic eval: give --default <kernel> or --spec <family.json>");
}

void add_fit_subcommand(CLI::App &app, HeuristicOptions &o) {
  o.fit_app = app.add_subcommand(
      "fit", "learn a rule list from full.csv or an aiter tuned CSV -> heuristic.json");
  add_results_options(*o.fit_app, o, nullptr);
  o.fit_app->add_option("--out", o.out, "the heuristic.json to write")->required();
  o.fit_app->add_option("--spec", o.spec,
                        "family.json: every kernel the table names must be its instance");
  add_fit_options(*o.fit_app, o);
}

void add_eval_subcommand(CLI::App &app, HeuristicOptions &o) {
  o.eval_app = app.add_subcommand("eval", "score a rule list against the tuned choice");
  auto *h = o.eval_app->add_option("--heuristic", o.heuristic, "the heuristic.json to score");
  auto *ho = o.eval_app->add_option(
      "--holdout", o.holdout,
      "fit on all but these groups and score them: 'N,K;N,K' (a group is one value of each "
      "config column other than M, in order)");
  auto *hf = o.eval_app->add_option(
      "--holdout-frac", o.holdout_frac,
      "cross-validate: hold out this fraction of the groups at a time (1/F folds)");
  hf->check(finite_number(0, 1));
  auto *hs = o.eval_app->add_option(
      "--holdout-seeded", o.holdout_seeded,
      "fit on all but round(F x groups) groups chosen by a shuffle seeded with --seed, and "
      "score them (docs/FORMATS.md: reproducible from the same table)");
  hs->check(finite_number(0, 1));
  o.eval_app->add_option("--seed", o.seed, "the seed of --holdout-seeded")->capture_default_str();
  ho->excludes(hf)->excludes(hs);
  hf->excludes(hs);
  h->excludes(ho)->excludes(hf)->excludes(hs);
  add_results_options(*o.eval_app, o, ho);
  o.eval_app->add_option("--spec", o.spec,
                         "family.json: the default kernel; every kernel the table names must "
                         "be its instance");
  o.eval_app->add_option("--default", o.default_kernel,
                         "the default kernel (winners-only tables: the most frequent kernel "
                         "when not given)");
  o.eval_app->add_option("--misses", o.misses,
                         "list the N slowest misses (shape, pick, tuned, slowdown); --json "
                         "lists them all");
  add_fit_options(*o.eval_app, o);
}

// The table the options name, read as --ties, --label and --group say, with --features parsed.
heuristic::Results read_table(HeuristicOptions &o) {
  o.fit.features.clear();
  for (const auto &feature : util::split_outside_parens(o.features, ',')) { // fill(a,b) is one
    if (!util::trim(feature).empty()) {
      o.fit.features.emplace_back(util::trim(feature));
    }
  }
  heuristic::ReadOptions read;
  read.ties = o.ties;
  read.label = o.label == "kernelName" ? heuristic::KernelLabel::name
                                       : heuristic::KernelLabel::name_and_split_k;
  read.group = o.group;
  heuristic::Results results = heuristic::read_results(o.results, read);
  check_family(o, results);
  return results;
}

// The slack of eval's "within" match: --ties, or 1% with the plain argmin (--ties 0), so that
// one option says which kernels are as good as the tuned one.
double within_slack(const HeuristicOptions &o) { return o.ties > 0 ? o.ties : 0.01; }

// eval: the rule list given, or rule lists fitted with groups held out, scored.
heuristic::Evaluation evaluate(const HeuristicOptions &o, const heuristic::Results &results) {
  std::string fallback = default_kernel(o, results);
  double tie = within_slack(o);
  heuristic::Evaluation e;
  if (!o.holdout.empty()) {
    e = heuristic::evaluate_holdout(results, heuristic::parse_holdout(results, o.holdout), o.fit,
                                    fallback, tie);
  } else if (o.holdout_seeded > 0) {
    std::vector<std::string> held = heuristic::seeded_groups(results, o.holdout_seeded, o.seed);
    e = heuristic::evaluate_holdout(results, held, o.fit, fallback, tie);
    e.split = "--holdout-seeded " + util::format_number(o.holdout_seeded) + " --seed " +
              std::to_string(o.seed) + ": " + std::to_string(held.size()) + " of " +
              std::to_string(heuristic::all_groups(results).size()) + " groups";
  } else if (o.holdout_frac > 0) {
    if (o.holdout_frac >= 1) {
      throw Error("heuristic eval: --holdout-frac: expected a fraction below 1, got " +
                  util::format_number(o.holdout_frac));
    }
    e = heuristic::evaluate_folds(results, static_cast<int>(std::lround(1 / o.holdout_frac)), o.fit,
                                  fallback, tie);
  } else {
    if (o.heuristic.empty()) {
      throw Error("heuristic eval: give --heuristic, --holdout, --holdout-frac or "
                  "--holdout-seeded");
    }
    heuristic::RuleList rules =
        heuristic::parse_rules(util::read_json(o.heuristic), results.columns, o.heuristic);
    e = heuristic::evaluate_rules(results, rules, fallback, tie);
  }
  return e;
}

} // namespace

Handler setup_heuristic(CLI::App &app) {
  auto o = std::make_shared<HeuristicOptions>();
  app.require_subcommand(1);
  add_fit_subcommand(app, *o);
  add_eval_subcommand(app, *o);
  return [o](Context &context) {
    context.json = context.json || o->json;
    heuristic::Results results = read_table(*o);
    if (o->fit_app->parsed()) {
      heuristic::RuleList rules = heuristic::fit(results, o->fit);
      util::write_json_atomic(o->out, heuristic::to_json(rules));
      if (context.json) {
        context.out << util::dump_json(heuristic::to_json(rules)) << "\n";
      } else {
        context.out << "wrote " << o->out << ": " << rules.rules.size() << " rules over "
                    << rules.kernels().size() << " kernels (" << util::join(rules.kernels(), ", ")
                    << ")\n";
      }
      return 0;
    }
    heuristic::Evaluation e = evaluate(*o, results);
    if (context.json) {
      nlohmann::json j = heuristic::to_json(e);
      context.out << util::dump_json(j) << "\n";
    } else {
      context.out << heuristic::to_text(e, o->misses);
    }
    return 0;
  };
}

} // namespace kopt::cli
