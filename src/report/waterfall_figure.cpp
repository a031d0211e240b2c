#include "report/figures_detail.hpp"

#include "util/text.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace kopt::report {

namespace {

using namespace detail;

// The job lane of each command (sorted by start): the first lane free when it starts.
// `lane_end` gets when each lane is free again; its size is the number of lanes.
std::vector<size_t> job_lanes(const std::vector<const buildinfo::LoggedCommand *> &order,
                              std::vector<int64_t> &lane_end) {
  std::vector<size_t> lane(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    size_t l = 0;
    while (l < lane_end.size() && lane_end[l] > order[i]->start_ms) {
      ++l;
    }
    if (l == lane_end.size()) {
      lane_end.push_back(0);
    }
    lane_end[l] = order[i]->end_ms;
    lane[i] = l;
  }
  return lane;
}

// Seconds from `first` to the start of the first command that compiles one of `family`'s TUs
// (0 when none does).
double first_compile_s(const std::vector<const buildinfo::LoggedCommand *> &order,
                       const std::map<std::string, const buildinfo::TuCompile *> &tus,
                       const std::string &family, int64_t first) {
  for (const auto *c : order) {
    for (const auto &output : c->outputs) {
      auto tu = tus.find(output);
      if (tu != tus.end() && tu->second->family == family) {
        return static_cast<double>(c->start_ms - first) / 1000;
      }
    }
  }
  return 0;
}

// The family's build budget on the waterfall: a dashed line where it ends, or a note at the
// right edge when it ends far beyond the build (the bars would shrink to slivers).
void budget_mark(Svg &svg, const Scale &x, double top, double bottom, const std::string &family,
                 double budget_s, double budget_at, const buildinfo::FamilyCompile *mine) {
  std::string text = family + " build budget " + num(budget_s, 4) + " s (compile_budget_s)" +
                     (mine ? ", its wall time " + num(mine->wall_s, 3) + " s" : "");
  if (budget_at <= x.hi()) {
    double bx = x(budget_at);
    svg.line(bx, top - 8, bx, bottom + 2, "#d62728", "stroke-width=\"2\" stroke-dasharray=\"6 4\"");
    svg.text(bx - 4, top - 12, text, "class=\"note\" text-anchor=\"end\" fill=\"#d62728\"");
  } else {
    svg.text(x(x.hi()), top - 12, text + ": ends at " + num(budget_at, 4) + " s, off this scale",
             "class=\"note\" text-anchor=\"end\" fill=\"#d62728\"");
  }
}

// The waterfall's title: which build it shows and how much of it came from the cache.
std::string waterfall_title(double span, size_t hits, size_t compiles) {
  return "Compile waterfall of the last build: " + num(span, 3) + " s, " + std::to_string(hits) +
         " of " + std::to_string(compiles) + " objects from the cache";
}

std::string waterfall_caption(size_t commands, size_t lanes, size_t hits, size_t misses,
                              double span, const std::string &family, double budget_s) {
  return "The last build of the build folder: the newest ninja run in its .ninja_log that "
         "compiled something (a later run of only custom commands, such as a bench, says "
         "nothing of the compile). " +
         std::to_string(commands) + " commands on " + std::to_string(lanes) + " job lanes, " +
         std::to_string(hits) + " ccache hits and " + std::to_string(misses) + " misses, wall " +
         num(span, 3) + " s. " +
         (budget_s > 0
              ? "In red: " + escape(family) +
                    "'s build wall-time budget, compile_budget_s in its family.json (" +
                    num(budget_s, 4) +
                    " s): how long its compiles and links may take from its first command; "
                    "kopt build-report fails the family when its wall time is over it."
              : escape(family) + " sets no build wall-time budget (compile_budget_s in its "
                                 "family.json).");
}

// The commands in the order they started (ninja's log order among equal starts).
std::vector<const buildinfo::LoggedCommand *>
by_start(const std::vector<buildinfo::LoggedCommand> &commands) {
  std::vector<const buildinfo::LoggedCommand *> order;
  for (const auto &c : commands) {
    order.push_back(&c);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto *a, const auto *b) { return a->start_ms < b->start_ms; });
  return order;
}

// The report's row of `family` (the last of that name), or nullptr.
const buildinfo::FamilyCompile *family_of(const buildinfo::BuildReport &report,
                                          const std::string &family) {
  const buildinfo::FamilyCompile *mine = nullptr;
  for (const auto &f : report.families) {
    mine = f.name == family ? &f : mine;
  }
  return mine;
}

// The TU that command `c` compiles (the last of its outputs that is one), or nullptr.
const buildinfo::TuCompile *tu_of(const buildinfo::LoggedCommand &c,
                                  const std::map<std::string, const buildinfo::TuCompile *> &tus) {
  const buildinfo::TuCompile *tu = nullptr;
  for (const auto &output : c.outputs) {
    auto found = tus.find(output);
    tu = found != tus.end() ? found->second : tu;
  }
  return tu;
}

} // namespace

std::optional<Figure> waterfall_figure(const std::vector<buildinfo::LoggedCommand> &commands,
                                       const buildinfo::BuildReport &report,
                                       const std::string &family, double budget_s) {
  if (commands.empty()) {
    return std::nullopt;
  }
  std::map<std::string, const buildinfo::TuCompile *> tus;
  for (const buildinfo::TuCompile &tu : report.tus) {
    tus[tu.object] = &tu;
  }
  std::vector<const buildinfo::LoggedCommand *> order = by_start(commands);
  int64_t first = order.front()->start_ms;
  int64_t last = first;
  for (const auto *c : order) {
    last = std::max(last, c->end_ms);
  }
  std::vector<int64_t> lane_end; // when each job lane is free again
  std::vector<size_t> lane = job_lanes(order, lane_end);
  const buildinfo::FamilyCompile *mine = family_of(report, family);
  // The family's span starts at its first command; the budget is marked from there.
  double family_start = mine ? first_compile_s(order, tus, family, first) : 0;
  double span = static_cast<double>(last - first) / 1000;
  double budget_at = family_start + budget_s;
  // The budget widens the axis only when that leaves the build's bars readable.
  double axis_hi = std::max(span, budget_s > 0 && budget_at <= 3 * span ? budget_at : 0) * 1.05;
  const double left = 90, right = kWidth - 20, top = 50, lane_h = 16;
  double bottom = top + lane_h * static_cast<double>(lane_end.size());
  Scale x(0, std::max(axis_hi, 0.01), left, right);
  Svg svg(kWidth, static_cast<int>(bottom) + 70, "compile waterfall");
  const std::string hit = "#1a9850", miss = "#d73027", unknown = "#9e9e9e", other = "#6baed6";
  size_t hits = 0, misses = 0, compiles = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const buildinfo::LoggedCommand &c = *order[i];
    const buildinfo::TuCompile *tu = tu_of(c, tus);
    std::string colour = other;
    std::string what = "link or other step";
    if (tu) {
      bool is_hit = tu->cache == buildinfo::CacheResult::direct_hit ||
                    tu->cache == buildinfo::CacheResult::preprocessed_hit;
      bool is_miss = tu->cache == buildinfo::CacheResult::miss;
      colour = is_hit ? hit : is_miss ? miss : unknown;
      what = "compile, ccache " + buildinfo::to_string(tu->cache);
      hits += is_hit ? 1 : 0;
      misses += is_miss ? 1 : 0;
      ++compiles;
    }
    double start = static_cast<double>(c.start_ms - first) / 1000;
    double end = static_cast<double>(c.end_ms - first) / 1000;
    double y = top + lane_h * static_cast<double>(lane[i]);
    svg.rect(x(start), y + 1, x(end) - x(start), lane_h - 3, colour,
             c.outputs.front() + ": " + num(end - start, 3) + " s (" + what + ")",
             "data-cache=\"" + std::string(tu ? buildinfo::to_string(tu->cache) : "none") + "\"");
  }
  for (size_t l = 0; l < lane_end.size(); ++l) {
    svg.text(left - 8, top + lane_h * static_cast<double>(l) + 12, "job " + std::to_string(l + 1),
             "class=\"tick\" text-anchor=\"end\"");
  }
  if (budget_s > 0) {
    budget_mark(svg, x, top, bottom, family, budget_s, budget_at, mine);
  }
  svg.x_axis(x, bottom + 4, "seconds since the ninja run began", seconds_tick);
  legend(svg, left, 20,
         {{"ccache hit", hit},
          {"ccache miss", miss},
          {"compile, cache unknown", unknown},
          {"link / other", other}});
  std::string svg_text = svg.str();
  size_t marks = count_marks(svg_text);
  std::string caption =
      waterfall_caption(order.size(), lane_end.size(), hits, misses, span, family, budget_s);
  return Figure{
      "waterfall", "Compile waterfall",
      figure_html("waterfall", waterfall_title(span, hits, compiles), svg_text, caption, marks),
      marks};
}

} // namespace kopt::report
