#include "heuristic/fit.hpp"

#include "util/error.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <set>

namespace kopt::heuristic {

namespace {

// A kernel that cannot run a shape must never win a leaf that holds it: 1000x slower.
const double kPenalty = std::log(1000.0);

std::vector<Feature> resolve_features(const Results &r, const std::vector<std::string> &names) {
  std::vector<Feature> out;
  for (const auto &name : names) {
    out.push_back(
        parse_feature(name, r.columns, "heuristic fit: " + r.source + ": feature '" + name + "'"));
  }
  return out;
}

// The costs of every (shape, kernel), every shape's tuned kernel and feature values, for the
// usable shapes.
struct Data {
  std::vector<std::string> kernels;
  std::vector<std::vector<double>> cost;
  std::vector<size_t> tuned;
  std::vector<std::vector<int64_t>> values;
};

Data prepare(const Results &r, const std::vector<Feature> &features, double within) {
  Data d;
  d.kernels = r.kernels();
  for (const auto &s : r.shapes) {
    if (s.tuned.empty()) {
      continue;
    }
    d.tuned.push_back(static_cast<size_t>(std::find(d.kernels.begin(), d.kernels.end(), s.tuned) -
                                          d.kernels.begin()));
    // Not picking the tuned kernel costs at least the whole tie slack: a kernel tied with it is
    // as good as noise allows, no better, so the fit settles on the consistent choice.
    const double fastest_us = s.kernels.at(s.best()).us;
    const double tuned_us = s.kernels.at(s.tuned).us;
    const double slack = std::log1p(r.ties);
    std::vector<double> cost;
    for (const auto &k : d.kernels) {
      auto it = s.kernels.find(k);
      if (k == s.tuned) {
        cost.push_back(0);
      } else if (within > 0 && it != s.kernels.end() && it->second.usable()) {
        // Scored as eval's within match does: within the slack of the tuned time is a hit.
        const double slowdown = it->second.us / tuned_us;
        cost.push_back(slowdown <= 1 + within ? 0 : std::min(std::log(slowdown), kPenalty));
      } else if (it != s.kernels.end() && it->second.usable()) {
        cost.push_back(std::min(std::max(std::log(it->second.us / fastest_us), slack), kPenalty));
      } else {
        cost.push_back(kPenalty);
      }
    }
    d.cost.push_back(std::move(cost));
    std::vector<int64_t> values;
    for (const auto &f : features) {
      values.push_back(f.value(s.dims));
    }
    d.values.push_back(std::move(values));
  }
  return d;
}

struct Bound {
  std::string feature;
  bool upper = true; ///< `<= value` when true, `> value` when false
  int64_t value = 0;
};

struct Leaf {
  std::vector<size_t> shapes;
  std::vector<Bound> path;
  size_t kernel = 0;
  double cost = 0;
  // The best split of this leaf, when gain > 0.
  double gain = 0;
  size_t feature = 0;
  int64_t threshold = 0;
};

std::pair<size_t, double> argmin(const std::vector<double> &sums) {
  size_t best = 0;
  for (size_t k = 1; k < sums.size(); ++k) {
    if (sums[k] < sums[best] - 1e-12) {
      best = k;
    }
  }
  return {best, sums[best]};
}

void choose_kernel(const Data &d, Leaf &leaf) {
  std::vector<double> sums(d.kernels.size(), 0.0);
  for (size_t s : leaf.shapes) {
    for (size_t k = 0; k < sums.size(); ++k) {
      sums[k] += d.cost[s][k];
    }
  }
  std::tie(leaf.kernel, leaf.cost) = argmin(sums);
}

// Every threshold of every feature over `shapes`: per feature, the shapes in the order of its
// value; `add(shape, left)` adds a shape to the left side's per-kernel sums, and at each threshold
// between two different values with at least `min_leaf` shapes on either side,
// `score(left, right, left_count, feature, threshold)` sees both sides' sums (`total` - left).
template <class Add, class ScoreSplit>
void scan_splits(const Data &d, const std::vector<size_t> &shapes, size_t feature_count,
                 size_t min_leaf, const std::vector<double> &total, Add add, ScoreSplit score) {
  const size_t n = shapes.size();
  for (size_t f = 0; f < feature_count; ++f) {
    std::vector<size_t> order = shapes;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return d.values[a][f] < d.values[b][f]; });
    std::vector<double> left(total.size(), 0.0), right(total.size());
    for (size_t i = 0; i + 1 < n; ++i) {
      add(order[i], left);
      int64_t here = d.values[order[i]][f];
      int64_t next = d.values[order[i + 1]][f];
      if (here == next || i + 1 < min_leaf || n - i - 1 < min_leaf) {
        continue;
      }
      for (size_t k = 0; k < total.size(); ++k) {
        right[k] = total[k] - left[k];
      }
      score(left, right, i + 1, f, here + (next - here) / 2);
    }
  }
}

// The split of a leaf with the largest cost reduction in leaf.gain, feature and threshold.
void find_split(const Data &d, size_t feature_count, size_t min_leaf, Leaf &leaf) {
  leaf.gain = 0;
  std::vector<double> total(d.kernels.size(), 0.0);
  auto add_costs = [&](size_t s, std::vector<double> &sums) {
    for (size_t k = 0; k < sums.size(); ++k) {
      sums[k] += d.cost[s][k];
    }
  };
  for (size_t s : leaf.shapes) {
    add_costs(s, total);
  }
  scan_splits(d, leaf.shapes, feature_count, min_leaf, total, add_costs,
              [&](const std::vector<double> &left, const std::vector<double> &right, size_t,
                  size_t f, int64_t threshold) {
                double gain = leaf.cost - argmin(left).second - argmin(right).second;
                if (gain > leaf.gain + 1e-9) {
                  leaf.gain = gain;
                  leaf.feature = f;
                  leaf.threshold = threshold;
                }
              });
}

// The tightest bounds of a path, one `<=` and one `>` per feature at most, in feature order.
std::vector<Condition> simplify(const std::vector<Bound> &path,
                                const std::vector<Feature> &features) {
  std::vector<Condition> out;
  for (const auto &f : features) {
    std::optional<int64_t> upper, lower;
    for (const auto &b : path) {
      if (b.feature != f.name) {
        continue;
      }
      if (b.upper) {
        upper = upper ? std::min(*upper, b.value) : b.value;
      } else {
        lower = lower ? std::max(*lower, b.value) : b.value;
      }
    }
    if (lower) {
      out.push_back({f.name, ">", *lower});
    }
    if (upper) {
      out.push_back({f.name, "<=", *upper});
    }
  }
  return out;
}

std::string shape_name(const Results &r, const Shape &s) { return shape_label(r.columns, s.dims); }

// The table for messages: "tuned.csv (gfx942,304)" for a group of an aiter table.
std::string source_name(const Results &r) {
  return r.table_group.empty() ? r.source : r.source + " (" + r.table_group + ")";
}

// A score as JSON; the slowdowns are null when `measured` is false (a winners-only table).
nlohmann::json score_json(const Score &s, bool measured) {
  auto ratio = [&](size_t n) { return s.shapes ? static_cast<double>(n) / s.shapes : 0.0; };
  auto slowdown = [&](double x) { return measured ? nlohmann::json(x) : nlohmann::json(); };
  return {{"shapes", s.shapes},
          {"matched", s.matched},
          {"match", ratio(s.matched)},
          {"within_tie", s.within_tie},
          {"match_within_tie", ratio(s.within_tie)},
          {"unmeasured", s.unmeasured},
          {"geomean_slowdown", slowdown(s.geomean())},
          {"worst_slowdown", slowdown(s.worst)},
          {"worst_shape", measured ? s.worst_shape : ""},
          {"default_geomean_slowdown", slowdown(s.default_geomean())},
          {"default_worst_slowdown", slowdown(s.default_worst)},
          {"default_matched", s.default_matched},
          {"default_match", ratio(s.default_matched)},
          {"baseline_matched", s.baseline_matched},
          {"baseline_match", ratio(s.baseline_matched)},
          {"tuned_vs_raw_geomean", slowdown(s.tuned_geomean())},
          {"tuned_vs_raw_worst", slowdown(s.tuned_worst)},
          {"tuned_vs_raw_worst_shape", measured ? s.tuned_worst_shape : ""}};
}

std::string percent(size_t n, size_t of) {
  return util::format_number(of ? 100.0 * static_cast<double>(n) / of : 0.0, 4) + "%";
}

// Grows leaves best-first by the cost reduction of a split (see fit in fit.hpp).
std::vector<Leaf> greedy_leaves(const Data &d, const std::vector<Feature> &features,
                                const FitOptions &options) {
  std::vector<Leaf> leaves(1);
  for (size_t s = 0; s < d.cost.size(); ++s) {
    leaves[0].shapes.push_back(s);
  }
  choose_kernel(d, leaves[0]);
  find_split(d, features.size(), options.min_leaf, leaves[0]);
  while (leaves.size() < static_cast<size_t>(options.max_arms)) {
    size_t best = 0;
    for (size_t i = 1; i < leaves.size(); ++i) {
      if (leaves[i].gain > leaves[best].gain + 1e-12) {
        best = i;
      }
    }
    if (leaves[best].gain <= 1e-9) {
      break;
    }
    Leaf parent = leaves[best];
    Leaf left, right;
    for (size_t s : parent.shapes) {
      (d.values[s][parent.feature] <= parent.threshold ? left : right).shapes.push_back(s);
    }
    left.path = right.path = parent.path;
    left.path.push_back({features[parent.feature].name, true, parent.threshold});
    right.path.push_back({features[parent.feature].name, false, parent.threshold});
    for (Leaf *leaf : {&left, &right}) {
      choose_kernel(d, *leaf);
      find_split(d, features.size(), options.min_leaf, *leaf);
    }
    leaves[best] = std::move(left);
    leaves.insert(leaves.begin() + static_cast<std::ptrdiff_t>(best) + 1, std::move(right));
  }
  return leaves;
}

// A node of the classification tree: a leaf when left < 0.
struct Node {
  Leaf leaf;
  int left = -1, right = -1;
};

// The split of `shapes` with the largest Gini decrease of the per-shape tuned kernel, or false.
bool gini_split(const Data &d, const std::vector<size_t> &labels, size_t feature_count,
                size_t min_leaf, Leaf &leaf) {
  const size_t n = leaf.shapes.size();
  std::vector<double> total(d.kernels.size(), 0.0);
  auto add_label = [&](size_t s, std::vector<double> &counts) { counts[labels[s]] += 1; };
  for (size_t s : leaf.shapes) {
    add_label(s, total);
  }
  auto impurity = [&](const std::vector<double> &counts, double size) {
    double sum = 0;
    for (double c : counts) {
      sum += c * c;
    }
    return size - sum / size; // size * gini
  };
  const double parent = impurity(total, static_cast<double>(n));
  double best = 1e-9;
  bool found = false;
  scan_splits(d, leaf.shapes, feature_count, min_leaf, total, add_label,
              [&](const std::vector<double> &left, const std::vector<double> &right,
                  size_t left_count, size_t f, int64_t threshold) {
                double nl = static_cast<double>(left_count);
                double nr = static_cast<double>(n - left_count);
                double decrease = parent - impurity(left, nl) - impurity(right, nr);
                if (decrease > best + 1e-12) {
                  best = decrease;
                  leaf.feature = f;
                  leaf.threshold = threshold;
                  found = true;
                }
              });
  return found;
}

int grow(const Data &d, const std::vector<size_t> &labels, const std::vector<Feature> &features,
         size_t min_leaf, Leaf leaf, std::vector<Node> &nodes) {
  choose_kernel(d, leaf);
  int index = static_cast<int>(nodes.size());
  nodes.push_back({leaf, -1, -1});
  if (!gini_split(d, labels, features.size(), min_leaf, leaf)) {
    return index;
  }
  Leaf left, right;
  for (size_t s : leaf.shapes) {
    (d.values[s][leaf.feature] <= leaf.threshold ? left : right).shapes.push_back(s);
  }
  left.path = right.path = leaf.path;
  left.path.push_back({features[leaf.feature].name, true, leaf.threshold});
  right.path.push_back({features[leaf.feature].name, false, leaf.threshold});
  int l = grow(d, labels, features, min_leaf, std::move(left), nodes);
  int r = grow(d, labels, features, min_leaf, std::move(right), nodes);
  nodes[static_cast<size_t>(index)].left = l;
  nodes[static_cast<size_t>(index)].right = r;
  return index;
}

void collect(const std::vector<Node> &nodes, int index, std::vector<Leaf> &out) {
  const Node &node = nodes[static_cast<size_t>(index)];
  if (node.left < 0) {
    out.push_back(node.leaf);
    return;
  }
  collect(nodes, node.left, out);
  collect(nodes, node.right, out);
}

// Grows a classification tree on the per-shape tuned kernel until its leaves are pure, then
// collapses, one at a time, the split whose removal costs the least slowdown, down to max_arms.
std::vector<Leaf> pruned_leaves(const Data &d, const std::vector<Feature> &features,
                                const FitOptions &options) {
  const std::vector<size_t> &labels = d.tuned;
  Leaf root;
  for (size_t s = 0; s < d.cost.size(); ++s) {
    root.shapes.push_back(s);
  }
  std::vector<Node> nodes;
  grow(d, labels, features, options.min_leaf, std::move(root), nodes);
  auto is_leaf = [&](int i) { return nodes[static_cast<size_t>(i)].left < 0; };
  size_t leaves = 0;
  for (const auto &n : nodes) {
    leaves += n.left < 0 ? 1 : 0;
  }
  while (leaves > static_cast<size_t>(options.max_arms)) {
    int weakest = -1;
    double least = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node &n = nodes[i];
      if (n.left < 0 || !is_leaf(n.left) || !is_leaf(n.right)) {
        continue;
      }
      double increase = n.leaf.cost - nodes[static_cast<size_t>(n.left)].leaf.cost -
                        nodes[static_cast<size_t>(n.right)].leaf.cost;
      if (weakest < 0 || increase < least - 1e-12) {
        weakest = static_cast<int>(i);
        least = increase;
      }
    }
    nodes[static_cast<size_t>(weakest)].left = -1;
    nodes[static_cast<size_t>(weakest)].right = -1;
    --leaves;
  }
  std::vector<Leaf> out;
  collect(nodes, 0, out);
  return out;
}

double total_cost(const std::vector<Leaf> &leaves) {
  double sum = 0;
  for (const auto &l : leaves) {
    sum += l.cost;
  }
  return sum;
}

// One rule per leaf, left to right; the last one without conditions.
RuleList to_rules(const Data &d, const std::vector<Feature> &features,
                  const std::vector<Leaf> &leaves) {
  RuleList rules;
  for (size_t i = 0; i < leaves.size(); ++i) {
    Rule rule;
    rule.kernel = d.kernels[leaves[i].kernel];
    if (i + 1 < leaves.size()) {
      rule.conditions = simplify(leaves[i].path, features);
    }
    rules.rules.push_back(std::move(rule));
  }
  return rules;
}

} // namespace

RuleList fit(const Results &results, const FitOptions &options) {
  if (options.max_arms < 1) {
    throw Error("heuristic fit: --max-arms: expected at least 1, got " +
                std::to_string(options.max_arms));
  }
  std::vector<Feature> features = resolve_features(results, options.features);
  if (!(options.within >= 0) || !std::isfinite(options.within)) {
    throw Error("heuristic fit: --within: expected a relative slack >= 0 (0.02 is 2%), got " +
                util::format_number(options.within));
  }
  Data d = prepare(results, features, options.within);
  if (d.cost.empty()) {
    throw Error("heuristic fit: " + results.source + ": no shape has a usable kernel (err 0)");
  }
  std::vector<Leaf> greedy = greedy_leaves(d, features, options);
  if (options.within > 0) {
    // Fit to the slowdown beyond a slack: the best-first tree alone (see FitOptions::within).
    return to_rules(d, features, greedy);
  }
  std::vector<Leaf> pruned = pruned_leaves(d, features, options);
  // Fewer rules win a tie: the same cost with fewer arms is the simpler heuristic.
  double g = total_cost(greedy), p = total_cost(pruned);
  return to_rules(d, features,
                  p < g - 1e-9 || (p <= g + 1e-9 && pruned.size() < greedy.size()) ? pruned
                                                                                   : greedy);
}

double Score::geomean() const {
  size_t n = shapes - unmeasured;
  return n ? std::exp(log_sum / static_cast<double>(n)) : 1.0;
}

double Score::default_geomean() const {
  return default_measured ? std::exp(default_log_sum / static_cast<double>(default_measured)) : 1.0;
}

double Score::tuned_geomean() const {
  return shapes ? std::exp(tuned_log_sum / static_cast<double>(shapes)) : 1.0;
}

void Score::add(const Score &o) {
  shapes += o.shapes;
  matched += o.matched;
  within_tie += o.within_tie;
  unmeasured += o.unmeasured;
  log_sum += o.log_sum;
  if (o.worst > worst) {
    worst = o.worst;
    worst_shape = o.worst_shape;
  }
  default_log_sum += o.default_log_sum;
  default_measured += o.default_measured;
  default_worst = std::max(default_worst, o.default_worst);
  default_matched += o.default_matched;
  baseline_matched += o.baseline_matched;
  tuned_log_sum += o.tuned_log_sum;
  if (o.tuned_worst > tuned_worst) {
    tuned_worst = o.tuned_worst;
    tuned_worst_shape = o.tuned_worst_shape;
  }
  misses.insert(misses.end(), o.misses.begin(), o.misses.end());
}

Evaluation evaluate_rules(const Results &results, const RuleList &rules,
                          const std::string &default_kernel, double tie,
                          const std::string &baseline) {
  Evaluation e;
  e.tie = tie;
  e.ties = results.ties;
  e.winners_only = results.winners_only;
  e.source = source_name(results);
  e.default_kernel = default_kernel;
  e.baseline = baseline.empty() ? most_frequent(results) : baseline;
  std::map<std::string, Score> groups;
  for (const auto &s : results.shapes) {
    const std::string &best = s.tuned;
    if (best.empty()) {
      continue;
    }
    double best_us = s.kernels.at(best).us;
    double raw_us = s.kernels.at(s.best()).us;
    std::string pick = evaluate(rules, results.columns, s.dims);
    if (pick.empty()) {
      pick = default_kernel;
    }
    Score one;
    one.shapes = 1;
    one.default_matched = default_kernel == best ? 1 : 0;
    one.baseline_matched = e.baseline == best ? 1 : 0;
    one.tuned_log_sum = std::log(best_us / raw_us);
    one.tuned_worst = best_us / raw_us;
    one.tuned_worst_shape = shape_name(results, s);
    auto it = s.kernels.find(pick);
    const bool measured = it != s.kernels.end() && it->second.usable();
    const double slowdown = measured ? it->second.us / best_us : 0;
    if (pick != best) {
      one.misses.push_back({shape_name(results, s), pick, best, slowdown});
    }
    if (!measured) {
      one.unmeasured = 1;
    } else {
      one.matched = pick == best ? 1 : 0;
      one.within_tie = pick == best || slowdown <= 1 + tie ? 1 : 0;
      one.log_sum = std::log(slowdown);
      one.worst = slowdown;
      one.worst_shape = shape_name(results, s);
    }
    auto d = s.kernels.find(default_kernel);
    if (d != s.kernels.end() && d->second.usable()) {
      one.default_measured = 1;
      one.default_log_sum = std::log(d->second.us / best_us);
      one.default_worst = d->second.us / best_us;
    }
    e.total.add(one);
    groups[group_of(results, s)].add(one);
  }
  e.groups.assign(groups.begin(), groups.end());
  return e;
}

Evaluation evaluate_holdout(const Results &results, const std::vector<std::string> &holdout,
                            const FitOptions &options, const std::string &default_kernel,
                            double tie) {
  Results test = select_groups(results, holdout, true);
  if (test.shapes.empty()) {
    throw Error("heuristic eval: --holdout: no shapes in " + util::join(holdout, "; "));
  }
  Results train = select_groups(results, holdout, false);
  if (train.shapes.empty()) {
    throw Error("heuristic eval: --holdout leaves no shapes to fit on");
  }
  resolve_ties(train, results.ties); // the fit must not see the held-out shapes' wins
  Evaluation e =
      evaluate_rules(test, fit(train, options), default_kernel, tie, most_frequent(train));
  e.held_out = holdout;
  std::sort(e.held_out.begin(), e.held_out.end());
  return e;
}

Evaluation evaluate_folds(const Results &results, int folds, const FitOptions &options,
                          const std::string &default_kernel, double tie) {
  std::vector<std::string> groups = all_groups(results);
  if (folds < 2 || static_cast<size_t>(folds) > groups.size()) {
    throw Error("heuristic eval: cross-validation needs 2 to " + std::to_string(groups.size()) +
                " folds (one per group at most), got " + std::to_string(folds));
  }
  Evaluation pooled;
  pooled.tie = tie;
  pooled.ties = results.ties;
  pooled.winners_only = results.winners_only;
  pooled.source = source_name(results);
  pooled.default_kernel = default_kernel;
  std::set<std::string> baselines;
  for (int f = 0; f < folds; ++f) {
    std::vector<std::string> holdout;
    for (size_t i = static_cast<size_t>(f); i < groups.size(); i += static_cast<size_t>(folds)) {
      holdout.push_back(groups[i]);
    }
    Evaluation e = evaluate_holdout(results, holdout, options, default_kernel, tie);
    baselines.insert(e.baseline);
    pooled.total.add(e.total);
    pooled.groups.insert(pooled.groups.end(), e.groups.begin(), e.groups.end());
  }
  std::sort(pooled.groups.begin(), pooled.groups.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  // Each fold's baseline is its own training groups' most frequent kernel.
  pooled.baseline = util::join({baselines.begin(), baselines.end()}, " / ");
  return pooled;
}

std::vector<std::string> all_groups(const Results &results) {
  std::set<std::string> names;
  for (const auto &s : results.shapes) {
    names.insert(group_of(results, s));
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> parse_holdout(const Results &results, const std::string &text) {
  std::vector<std::string> columns = group_columns(results);
  std::vector<std::string> known = all_groups(results);
  std::vector<std::string> out;
  for (const auto &item : util::split(text, ';')) {
    if (util::trim(item).empty()) {
      continue;
    }
    std::vector<std::string> values = util::split(item, ',');
    if (values.size() != columns.size()) {
      throw Error("--holdout: '" + item + "': a group of " + source_name(results) + " is " +
                  std::to_string(columns.size()) + " values, " + util::join(columns, ",") +
                  " (the config columns other than M), got " + std::to_string(values.size()));
    }
    std::vector<int64_t> dims;
    for (size_t c = 0; c < columns.size(); ++c) {
      dims.push_back(util::parse_int(util::trim(values[c]), "--holdout: " + columns[c]));
    }
    std::string group = shape_label(columns, dims);
    if (!std::binary_search(known.begin(), known.end(), group)) {
      throw Error("--holdout: " + group + " is not a group of " + source_name(results) +
                  " (groups: " + util::join(known, "; ") + ")");
    }
    out.push_back(group);
  }
  if (out.empty()) {
    throw Error("--holdout: expected at least one group (" + util::join(columns, ",") +
                "; ...), got '" + text + "'");
  }
  return out;
}

std::vector<std::string> seeded_groups(const Results &results, double fraction, uint64_t seed) {
  std::vector<std::string> groups = all_groups(results);
  if (!(fraction > 0 && fraction < 1)) {
    throw Error("--holdout-seeded: expected a fraction of the groups between 0 and 1, got " +
                util::format_number(fraction));
  }
  const size_t n = groups.size();
  if (n < 2) {
    throw Error("--holdout-seeded: " + source_name(results) + " has " + std::to_string(n) +
                " group (" + util::join(group_columns(results), ",") +
                "): nothing is left to fit on when it is held out");
  }
  std::mt19937_64 engine(seed);
  for (size_t i = n - 1; i > 0; --i) {
    std::swap(groups[i], groups[static_cast<size_t>(engine() % (i + 1))]);
  }
  const size_t count = std::clamp<size_t>(
      static_cast<size_t>(std::llround(fraction * static_cast<double>(n))), 1, n - 1);
  groups.resize(count);
  std::sort(groups.begin(), groups.end());
  return groups;
}

// The misses, slowest first (unmeasured picks first of all), then in shape order.
std::vector<Miss> slowest_first(std::vector<Miss> misses) {
  auto key = [](const Miss &m) { return m.slowdown == 0 ? HUGE_VAL : m.slowdown; };
  std::stable_sort(misses.begin(), misses.end(),
                   [&](const Miss &a, const Miss &b) { return key(a) > key(b); });
  return misses;
}

nlohmann::json to_json(const Evaluation &e) {
  const bool measured = !e.winners_only;
  nlohmann::json out = score_json(e.total, measured);
  nlohmann::json misses = nlohmann::json::array();
  for (const auto &m : slowest_first(e.total.misses)) {
    misses.push_back(
        {{"shape", m.shape},
         {"pick", m.pick},
         {"tuned", m.tuned},
         {"slowdown", m.slowdown == 0 ? nlohmann::json() : nlohmann::json(m.slowdown)}});
  }
  out["misses"] = std::move(misses);
  out["tie"] = e.tie;
  out["ties"] = e.ties;
  out["winners_only"] = e.winners_only;
  out["source"] = e.source;
  out["default"] = e.default_kernel;
  out["baseline"] = e.baseline;
  out["held_out"] = e.held_out;
  out["split"] = e.split;
  nlohmann::json groups = nlohmann::json::array();
  for (const auto &[name, score] : e.groups) {
    nlohmann::json row = score_json(score, measured);
    row["group"] = name;
    groups.push_back(std::move(row));
  }
  out["groups"] = std::move(groups);
  return out;
}

namespace {

// "99.1% (8100/8172)"
std::string match_of(size_t n, size_t of) {
  return percent(n, of) + " (" + std::to_string(n) + "/" + std::to_string(of) + ")";
}

// The lines of a winners-only evaluation: match rates against the one-kernel anchors.
std::string winners_text(const Evaluation &e) {
  const Score &t = e.total;
  const std::string none = "not measured (winners only: no time for a kernel that did not win)\n";
  std::string out = "shapes: " + std::to_string(t.shapes) + " of " + e.source +
                    ", winners only: picks are scored by match alone\n";
  out += "match vs tuned: " + match_of(t.matched, t.shapes) + "\n";
  out += "most frequent kernel alone (" + e.baseline +
         "): " + match_of(t.baseline_matched, t.shapes) + "; misses " +
         std::to_string(t.shapes - t.matched) + " vs " +
         std::to_string(t.shapes - t.baseline_matched) + "\n";
  if (e.default_kernel != e.baseline) {
    out += "default kernel alone (" + e.default_kernel +
           "): " + match_of(t.default_matched, t.shapes) + "\n";
  }
  out += "geomean slowdown vs tuned: " + none;
  out += "worst slowdown vs tuned: " + none;
  out += "\n| group | shapes | match | most frequent alone |\n|---|---|---|---|\n";
  for (const auto &[name, s] : e.groups) {
    out += "| " + name + " | " + std::to_string(s.shapes) + " | " + percent(s.matched, s.shapes) +
           " | " + percent(s.baseline_matched, s.shapes) + " |\n";
  }
  return out;
}

// The lines of an evaluation on a full table: match rates, slowdowns and what the ties cost.
std::string full_text(const Evaluation &e) {
  const Score &t = e.total;
  std::string out = "shapes: " + std::to_string(t.shapes) + "\n";
  out += "match vs tuned: " + match_of(t.matched, t.shapes) + "; within " +
         util::format_number(100 * e.tie, 3) + "% of tuned: " + percent(t.within_tie, t.shapes) +
         "\n";
  out += "geomean slowdown vs tuned: " + util::format_number(t.geomean(), 4) +
         "x (default only: " + util::format_number(t.default_geomean(), 4) + "x)\n";
  out += "worst slowdown vs tuned: " + util::format_number(t.worst, 4) + "x at " + t.worst_shape +
         " (default only: " + util::format_number(t.default_worst, 4) + "x)\n";
  out += "tuned (ties " + util::format_number(100 * e.ties, 3) + "%) vs the raw argmin: geomean " +
         util::format_number(t.tuned_geomean(), 5) + "x, worst " +
         util::format_number(t.tuned_worst, 5) + "x" +
         (t.tuned_worst > 1 ? " at " + t.tuned_worst_shape : std::string()) + "\n";
  if (t.unmeasured) {
    out +=
        "picks without a usable timing (left out of the means): " + std::to_string(t.unmeasured) +
        "\n";
  }
  out += "\n| group | shapes | match | geomean | worst | default geomean |\n";
  out += "|---|---|---|---|---|---|\n";
  for (const auto &[name, s] : e.groups) {
    out += "| " + name + " | " + std::to_string(s.shapes) + " | " + percent(s.matched, s.shapes) +
           " | " + util::format_number(s.geomean(), 4) + " | " + util::format_number(s.worst, 4) +
           " | " + util::format_number(s.default_geomean(), 4) + " |\n";
  }
  return out;
}

} // namespace

std::string to_text(const Evaluation &e, size_t misses) {
  const Score &t = e.total;
  std::string out;
  if (!e.held_out.empty()) {
    out += "held out" + (e.split.empty() ? std::string() : " (" + e.split + ")") + ": " +
           util::join(e.held_out, "; ") + "\n";
  }
  out += e.winners_only ? winners_text(e) : full_text(e);
  if (misses > 0 && !t.misses.empty()) {
    std::vector<Miss> slowest = slowest_first(t.misses);
    slowest.resize(std::min(misses, slowest.size()));
    out += "\nmisses, slowest first (" + std::to_string(slowest.size()) + " of " +
           std::to_string(t.misses.size()) +
           "):\n| shape | pick | tuned | slowdown |\n|---|---|---|---|\n";
    for (const auto &m : slowest) {
      out +=
          "| " + m.shape + " | " + m.pick + " | " + m.tuned + " | " +
          (m.slowdown == 0 ? std::string("no timing") : util::format_number(m.slowdown, 4) + "x") +
          " |\n";
    }
  }
  return out;
}

} // namespace kopt::heuristic
