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

// The two leaves of `parent`'s chosen split (its feature and threshold): the shapes at or below
// the threshold go left, the others right, and each path gains the split's condition.
std::pair<Leaf, Leaf> split(const Data &d, const std::vector<Feature> &features,
                            const Leaf &parent) {
  Leaf left, right;
  for (size_t s : parent.shapes) {
    (d.values[s][parent.feature] <= parent.threshold ? left : right).shapes.push_back(s);
  }
  left.path = right.path = parent.path;
  left.path.push_back({features[parent.feature].name, true, parent.threshold});
  right.path.push_back({features[parent.feature].name, false, parent.threshold});
  return {std::move(left), std::move(right)};
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
    auto [left, right] = split(d, features, leaves[best]);
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
  auto [left, right] = split(d, features, leaf);
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

} // namespace kopt::heuristic
