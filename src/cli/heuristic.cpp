#include "cli/subcommands.hpp"
#include "heuristic/fit.hpp"
#include "spec/family.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <cmath>
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
  double tie = 0.01;
  size_t misses = 0;
  double ties = 0;
  heuristic::FitOptions fit;
  bool json = false; ///< --json after fit / eval (the parent's flag comes before them)
  CLI::App *fit_app = nullptr;
  CLI::App *eval_app = nullptr;
};

void add_fit_options(CLI::App &app, HeuristicOptions &o) {
  app.add_flag("--json", o.json, "print a machine-readable JSON result instead of text");
  app.add_option("--max-arms", o.fit.max_arms, "the most rules")->capture_default_str();
  app.add_option("--features", o.features,
                 "comma-separated features: columns, A*B, fill(BMxBN,C), waves(BMxBN,C), X/Y "
                 "(docs/FORMATS.md)")
      ->capture_default_str();
  app.add_option("--min-leaf", o.fit.min_leaf, "the fewest shapes behind a rule")
      ->capture_default_str();
  add_ties_option(app, o.ties);
}

std::string default_kernel(const HeuristicOptions &o) {
  if (!o.default_kernel.empty()) {
    return o.default_kernel;
  }
  if (!o.spec.empty()) {
    return spec::load_family(o.spec).default_kernel;
  }
  throw Error("heuristic eval: give --default <kernel> or --spec <family.json>");
}

} // namespace

Handler setup_heuristic(CLI::App &app) {
  auto o = std::make_shared<HeuristicOptions>();
  app.require_subcommand(1);
  o->fit_app = app.add_subcommand("fit", "learn a rule list from full.csv -> heuristic.json");
  o->fit_app->add_option("--results", o->results, "kopt tune's full.csv")->required();
  o->fit_app->add_option("--out", o->out, "the heuristic.json to write")->required();
  add_fit_options(*o->fit_app, *o);
  o->eval_app = app.add_subcommand("eval", "score a rule list against the tuned choice");
  o->eval_app->add_option("--results", o->results, "kopt tune's full.csv")->required();
  auto *h = o->eval_app->add_option("--heuristic", o->heuristic, "the heuristic.json to score");
  auto *ho = o->eval_app->add_option("--holdout", o->holdout,
                                     "fit on all but these groups and score them: 'N,K;N,K'");
  auto *hf = o->eval_app->add_option(
      "--holdout-frac", o->holdout_frac,
      "cross-validate: hold out this fraction of the groups at a time (1/F folds)");
  ho->excludes(hf);
  h->excludes(ho)->excludes(hf);
  o->eval_app->add_option("--spec", o->spec, "family.json (for the default kernel)");
  o->eval_app->add_option("--default", o->default_kernel, "the default kernel");
  o->eval_app->add_option("--tie", o->tie, "slack of the 'within tie' match")
      ->capture_default_str();
  o->eval_app->add_option("--misses", o->misses,
                          "list the N slowest misses (shape, pick, tuned, slowdown); --json "
                          "lists them all");
  add_fit_options(*o->eval_app, *o);
  return [o](Context &context) {
    context.json = context.json || o->json;
    o->fit.features.clear();
    for (const auto &feature : util::split_outside_parens(o->features, ',')) { // fill(a,b) is one
      if (!util::trim(feature).empty()) {
        o->fit.features.emplace_back(util::trim(feature));
      }
    }
    heuristic::Results results = heuristic::read_results(o->results, o->ties);
    if (o->fit_app->parsed()) {
      heuristic::RuleList rules = heuristic::fit(results, o->fit);
      util::write_json_atomic(o->out, heuristic::to_json(rules));
      if (context.json) {
        context.out << heuristic::to_json(rules).dump(2) << "\n";
      } else {
        context.out << "wrote " << o->out << ": " << rules.rules.size() << " rules over "
                    << rules.kernels().size() << " kernels (" << util::join(rules.kernels(), ", ")
                    << ")\n";
      }
      return 0;
    }
    std::string fallback = default_kernel(*o);
    heuristic::Evaluation e;
    if (!o->holdout.empty()) {
      e = heuristic::evaluate_holdout(results, heuristic::parse_holdout(results, o->holdout),
                                      o->fit, fallback, o->tie);
    } else if (o->holdout_frac > 0) {
      if (o->holdout_frac >= 1) {
        throw Error("heuristic eval: --holdout-frac: expected a fraction below 1, got " +
                    util::format_number(o->holdout_frac));
      }
      e = heuristic::evaluate_folds(results, static_cast<int>(std::lround(1 / o->holdout_frac)),
                                    o->fit, fallback, o->tie);
    } else {
      if (o->heuristic.empty()) {
        throw Error("heuristic eval: give --heuristic, --holdout or --holdout-frac");
      }
      heuristic::RuleList rules =
          heuristic::parse_rules(util::read_json(o->heuristic), results.columns, o->heuristic);
      e = heuristic::evaluate_rules(results, rules, fallback, o->tie);
    }
    if (context.json) {
      nlohmann::json j = heuristic::to_json(e);
      j["default"] = fallback;
      context.out << j.dump(2) << "\n";
    } else {
      context.out << heuristic::to_text(e, o->misses);
    }
    return 0;
  };
}

} // namespace kopt::cli
