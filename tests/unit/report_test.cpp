#include "report/figures.hpp"
#include "report/loop.hpp"
#include "report/report.hpp"
#include "report/svg.hpp"

#include "decide/decide.hpp"
#include "heuristic/fit.hpp"
#include "spec/family.hpp"
#include "temp_dir.hpp"
#include "util/csv.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <string>

using kopt::test::fixture;
using kopt::test::TempDir;
namespace fs = std::filesystem;
namespace report = kopt::report;

namespace {

const char *kAttempts =
    R"({"kind":"baseline","date":"2026-11-25T10:00:00Z","candidate":"00","hash":"aa","geomean_us":12.5,"measured_by":"chrono"})"
    "\n"
    R"({"kind":"attempt","date":"2026-11-25T10:05:00Z","candidate":"01","hash":"bb","best":"00","best_hash":"aa","proposal":"","target":"global","hypothesis":"wider tiles","verdict":"keep","reason":"","consecutive_regressions":0,"overall_change":-0.2,"overall_interval":[-0.25,-0.15],"classes":[{"class":"small","change":-0.1,"interval":[-0.12,-0.08],"state":"better"},{"class":"large","change":-0.3,"interval":null,"state":"better"}],"event":""})"
    "\n"
    R"({"kind":"stop","date":"2026-11-25T11:00:00Z","reason":"5 consecutive measured regressions"})"
    "\n";

kopt::heuristic::Results table() {
  // Two shapes: k1 is fastest on the first, k2 on the second; k2 failed the golden on the first.
  return kopt::heuristic::parse_results(kopt::util::parse_csv("M,N,K,kernel,us,err\n"
                                                              "16,64,64,k1,10,0\n"
                                                              "16,64,64,k2,5,1\n"
                                                              "512,64,64,k1,30,0\n"
                                                              "512,64,64,k2,20,0\n",
                                                              "full.csv"));
}

} // namespace

TEST_SUITE_BEGIN("report");

TEST_CASE("read_attempts reads baselines, attempts and stops, and names a bad line") {
  TempDir tmp;
  auto attempts = report::read_attempts(tmp.write("attempts.jsonl", kAttempts));
  REQUIRE(attempts.size() == 3);
  CHECK(attempts[0].kind == kopt::ledger::Kind::baseline);
  CHECK(attempts[0].geomean_us == 12.5);
  CHECK(attempts[1].verdict == kopt::decide::Verdict::keep);
  CHECK(attempts[1].overall_interval == std::make_pair(-0.25, -0.15));
  REQUIRE(attempts[1].classes.size() == 2);
  CHECK_FALSE(attempts[1].classes[1].interval);
  CHECK(report::verdict_of(attempts[2]) == "5 consecutive measured regressions");
  CHECK(report::read_attempts(tmp.path() / "none.jsonl").empty());
  // The ledger's own reader checks each line: a cut line and a missing field name file:line.
  auto message_of = [](const std::filesystem::path &file) -> std::string {
    try {
      report::read_attempts(file);
    } catch (const kopt::Error &e) {
      return e.what();
    }
    return "";
  };
  auto bad = tmp.write("bad.jsonl", std::string(kAttempts) + "{cut\n");
  CHECK(message_of(bad) ==
        bad.string() +
            ":4:2: invalid JSON: invalid literal; last read: '{c'; expected string literal");
  auto short_line =
      tmp.write("short.jsonl", std::string(kAttempts) + R"({"kind":"attempt","date":"2026-11-25"})"
                                                        "\n");
  CHECK(message_of(short_line) == short_line.string() + ":4: missing field 'candidate'");
  std::string text = report::format_attempts(attempts);
  CHECK(
      text.find("01  keep        vs BEST 00: overall -20.00% [-25.00%, -15.00%]  -- wider tiles") !=
      std::string::npos);
  CHECK(text.find("stopped: 5 consecutive measured regressions") != std::string::npos);
}

TEST_CASE("the history figure draws one mark per class and attempt, and the baseline") {
  TempDir tmp;
  auto attempts = report::read_attempts(tmp.write("attempts.jsonl", kAttempts));
  auto figure = report::history_figure(attempts, 0.01);
  REQUIRE(figure);
  CHECK(figure->marks == 3);
  CHECK(figure->html.find("data-figure=\"history\"") != std::string::npos);
  CHECK(figure->html.find("wider tiles") != std::string::npos);
  CHECK(figure->html.find("tie band (noise threshold) \u00b11.0%") != std::string::npos);
  CHECK(figure->html.find("<b style=\"color:#1a9850\">-10%</b> better<br><small>[-12%, -8.0%]") !=
        std::string::npos); // each class's change as text in the table, not only on hover
  CHECK_FALSE(report::history_figure({}, 0.01));
}

namespace {

// The loop of the user's screenshot: keeps at -22% to -32%, a regression at +100%, one candidate
// attempted three times, a failed and an incorrect attempt.
const char *kLoop =
    R"({"kind":"baseline","date":"d0","candidate":"00","hash":"aa","geomean_us":12.5,"measured_by":"chrono"})"
    "\n"
    R"({"kind":"attempt","date":"d1","candidate":"07","hash":"c1","best":"00","best_hash":"aa","proposal":"","target":"global","hypothesis":"h","verdict":"keep","reason":"","consecutive_regressions":0,"overall_change":-0.27,"overall_interval":[-0.3,-0.24],"classes":[{"class":"small","change":-0.22,"interval":[-0.25,-0.19],"state":"better"},{"class":"large","change":-0.32,"interval":[-0.35,-0.29],"state":"better"}],"event":""})"
    "\n"
    R"({"kind":"attempt","date":"d2","candidate":"07","hash":"c2","best":"07","best_hash":"c1","proposal":"","target":"global","hypothesis":"h","verdict":"failed","reason":"","consecutive_regressions":0,"overall_change":null,"overall_interval":null,"classes":[],"event":""})"
    "\n"
    R"({"kind":"attempt","date":"d3","candidate":"08","hash":"c3","best":"07","best_hash":"c1","proposal":"","target":"global","hypothesis":"h","verdict":"incorrect","reason":"","consecutive_regressions":0,"overall_change":null,"overall_interval":null,"classes":[],"event":""})"
    "\n"
    R"({"kind":"attempt","date":"d4","candidate":"07","hash":"c4","best":"07","best_hash":"c1","proposal":"","target":"global","hypothesis":"h","verdict":"regression","reason":"","consecutive_regressions":1,"overall_change":1.0,"overall_interval":[0.9,1.1],"classes":[{"class":"small","change":1.0,"interval":[0.9,1.1],"state":"worse"},{"class":"large","change":0.99,"interval":null,"state":"worse"}],"event":""})"
    "\n";

// The y of each tick label of an SVG's y axis, by its text.
std::map<std::string, double> y_ticks(const std::string &html) {
  std::map<std::string, double> ticks;
  std::regex tick(
      R"re(<text x="[^"]*" y="([^"]*)" class="tick" text-anchor="end">([^<]*)</text>)re");
  for (std::sregex_iterator it(html.begin(), html.end(), tick), end; it != end; ++it) {
    ticks[(*it)[2]] = std::stod((*it)[1]);
  }
  return ticks;
}

} // namespace

TEST_CASE("the history figure: ticks on both sides, failed and incorrect apart, repeats numbered") {
  TempDir tmp;
  auto figure = report::history_figure(report::read_attempts(tmp.write("a.jsonl", kLoop)), 0.01);
  REQUIRE(figure);
  CHECK(figure->marks == 7); // the baseline, 2 x 2 class dots, the failed and incorrect markers
  const std::string &html = figure->html;
  std::map<std::string, double> ticks = y_ticks(html);
  CHECK(ticks.count("-25%"));
  CHECK(ticks.count("0%"));
  CHECK(ticks.count("+25%"));
  CHECK(ticks.count("+100%"));
  // The failed and incorrect attempts sit in labelled rows under every tick, not on 0%.
  double lowest = 0;
  for (const auto &[text, y] : ticks) {
    lowest = std::max(lowest, y);
  }
  for (const std::string &verdict : {"failed", "incorrect"}) {
    CAPTURE(verdict);
    CHECK(html.find("fill=\"" + std::string(verdict == "failed" ? "#222222" : "#8e44ad") + "\">" +
                    verdict + "</text>") != std::string::npos);
    std::smatch m;
    REQUIRE(std::regex_search(
        html, m,
        std::regex("<path class=\"mark\" d=\"M[0-9.]+ ([0-9.]+)[^>]*><title>[^<]*\\(" + verdict +
                   "\\)")));
    CHECK(std::stod(m[1]) > lowest);
  }
  // 07's three attempts read as one candidate's, under the chart and in the table.
  CHECK(html.find(">07 (1)</text>") != std::string::npos);
  CHECK(html.find(">07 (2)</text>") != std::string::npos);
  CHECK(html.find("<tr data-attempt=\"07 (3)\">") != std::string::npos);
  CHECK(html.find(">08</text>") != std::string::npos);
  // Per-class changes as text: -22% and -32% for 07's first attempt, the overall's own state.
  CHECK(html.find(">-22%</b> better") != std::string::npos);
  CHECK(html.find(">-32%</b> better") != std::string::npos);
  CHECK(html.find(">+100%</b> worse<br><small>[+90%, +110%]</small>") != std::string::npos);
}

TEST_CASE("rebases and lands are events between the attempts; a failed row says why") {
  std::string loop =
      std::string(kLoop) +
      R"({"kind":"land","date":"d5","candidate":"07","best":"07","hash":"c1","removed":["08"],"rebased":[],"reason":"the family's files are 07's; removed 08"})"
      "\n"
      R"({"kind":"rebase","date":"d6","candidate":"07","best":"07","from_hash":"c1aaaaaa","hash":"c5bbbbbb","reason":"configs.csv: a row added"})"
      "\n"
      R"({"kind":"attempt","date":"d7","candidate":"09","hash":"c6","best":"07","best_hash":"c5","proposal":"","target":"global","hypothesis":"h","verdict":"failed","reason":"round 1 of 6: harness killed by signal 11 (Segmentation fault)\nits log: x","consecutive_regressions":0,"overall_change":null,"overall_interval":null,"classes":[],"event":""})"
      "\n";
  TempDir tmp;
  auto figure = report::history_figure(report::read_attempts(tmp.write("a.jsonl", loop)), 0.01);
  REQUIRE(figure);
  const std::string &html = figure->html;
  // No column for the land or the rebase: 07's attempts stay numbered 1 to 3, 09 follows.
  CHECK(html.find(">07 (4)</text>") == std::string::npos);
  CHECK(html.find("<tr data-attempt=\"09\">") != std::string::npos);
  CHECK(figure->marks == 8);
  // Each event is a labelled line in the chart and a row of the table, in the order recorded.
  CHECK(html.find("data-event=\"land\"><title>landed 07: the family&#39;s files are 07&#39;s; "
                  "removed 08</title>landed 07</text>") != std::string::npos);
  CHECK(html.find("data-event=\"rebase\"><title>rebased BEST 07 (hash c1aaaaaa -&gt; c5bbbbbb): "
                  "configs.csv: a row added</title>rebased 07</text>") != std::string::npos);
  size_t last_07 = html.find("<tr data-attempt=\"07 (3)\">");
  size_t land = html.find("<tr class=\"event\" data-event=\"land\">");
  size_t rebase = html.find("<tr class=\"event\" data-event=\"rebase\">");
  size_t row_09 = html.find("<tr data-attempt=\"09\">");
  REQUIRE(land != std::string::npos);
  CHECK(last_07 < land);
  CHECK(land < rebase);
  CHECK(rebase < row_09);
  CHECK(html.find("colspan=\"7\"><b>landed 07: the family&#39;s files are 07&#39;s; removed "
                  "08</b>") != std::string::npos);
  // The failed row's verdict cell carries its reason's first line.
  CHECK(html.find("failed<div class=\"reason\" title=\"round 1 of 6: harness killed by signal 11 "
                  "(Segmentation fault)\nits log: x\">round 1 of 6: harness killed by signal 11 "
                  "(Segmentation fault)</div>") != std::string::npos);
}

TEST_CASE(
    "change axes: round percent steps, log beyond 0.5x..2.5x, a tick on each side with data") {
  auto labels = [](const report::ChangeAxis &axis) {
    std::vector<std::string> out;
    for (double t : axis.ticks) {
      out.push_back(report::change_tick(t));
    }
    return out;
  };
  report::ChangeAxis user = report::change_axis(-0.32, 1.0, true, true);
  CHECK_FALSE(user.log);
  CHECK(labels(user) == std::vector<std::string>{"-25%", "0%", "+25%", "+50%", "+75%", "+100%"});
  // -3% is less than a step below 0: the axis reaches one step down so that side has a scale.
  report::ChangeAxis small = report::change_axis(-0.03, 1.0, true, true);
  CHECK(labels(small) ==
        std::vector<std::string>{"-20%", "0%", "+20%", "+40%", "+60%", "+80%", "+100%"});
  report::ChangeAxis wide = report::change_axis(-0.95, 18.48, true, true);
  CHECK(wide.log);
  CHECK(labels(wide) == std::vector<std::string>{"-95%", "-90%", "-80%", "-50%", "0%", "+100%",
                                                 "+400%", "+900%", "+1900%"});
  // No data below 0 (the tie band alone): no tick there.
  report::ChangeAxis above = report::change_axis(-0.01, 18.48, false, true);
  CHECK(labels(above) == std::vector<std::string>{"0%", "+50%", "+100%", "+200%", "+400%", "+600%",
                                                  "+900%", "+1400%", "+1900%"});
  // A range of a few times on a log scale: ratios 1.5 and 3 too, not only 0% and +100%.
  report::ChangeAxis few = report::change_axis(-0.01, 2.07, false, true);
  CHECK(few.log);
  CHECK(labels(few) == std::vector<std::string>{"0%", "+50%", "+100%", "+200%"});
  report::ChangeAxis tiny = report::change_axis(-0.004, 0.006, true, true);
  CHECK(labels(tiny) ==
        std::vector<std::string>{"-0.4%", "-0.2%", "0%", "+0.2%", "+0.4%", "+0.6%"});
}

TEST_CASE("the overall change's state comes from its own interval and the threshold") {
  CHECK(report::change_state(18.48, std::make_pair(17.0, 20.0), 0.01) == "worse");
  CHECK(report::change_state(-0.2, std::make_pair(-0.25, -0.15), 0.01) == "better");
  CHECK(report::change_state(0.002, std::make_pair(-0.003, 0.007), 0.01) == "tie");
  CHECK(report::change_state(0.005, std::make_pair(0.002, 0.008), 0.01) == "pending");
  CHECK(report::change_state(0.05, std::nullopt, 0.01) == "worse");
  CHECK(report::change_state(0.005, std::nullopt, 0.01) == "tie");
  // The page: a +1848% regression whose decision.json (as kopt wrote it before) says "tie".
  TempDir tmp;
  kopt::spec::Family family = kopt::spec::load_family(fixture("gen/tiny/family.json"));
  kopt::spec::Layout layout(tmp.path());
  fs::create_directories(layout.ledger);
  tmp.write(
      "ledger/attempts.jsonl",
      R"({"kind":"baseline","date":"d","candidate":"01","hash":"b1","geomean_us":10,"measured_by":"chrono"})"
      "\n"
      R"({"kind":"attempt","date":"d","candidate":"03","hash":"c3","best":"01","best_hash":"b1","proposal":"","target":"global","hypothesis":"h","verdict":"regression","reason":"","consecutive_regressions":1,"overall_change":18.48,"overall_interval":[17.0,20.0],"classes":[{"class":"small","change":18.48,"interval":[17.0,20.0],"state":"worse"}],"event":""})"
      "\n");
  kopt::ledger::rebuild(kopt::ledger::Files{layout.ledger}, family.name);
  kopt::decide::Decision d;
  d.candidate = "03";
  d.hash = "c3";
  d.best = "01";
  d.best_hash = "b1";
  d.verdict = kopt::decide::Verdict::regression;
  kopt::decide::ClassRow overall;
  overall.config_class = "overall";
  overall.change = 18.48;
  overall.has_interval = true;
  overall.low = 17.0;
  overall.high = 20.0;
  overall.state = kopt::decide::State::tie;
  d.overall = overall;
  fs::create_directories(layout.decision("03").parent_path());
  kopt::decide::write_decision(layout.decision("03"), d);
  report::ReportOptions options;
  options.date = "2026-11-28";
  report::Page page = report::make_report(family, layout, options);
  CHECK(page.html.find("+1848% [+1700%, +2000%]  worse") != std::string::npos);
  CHECK(page.html.find("+1848% [+1700%, +2000%]  tie") == std::string::npos);
}

TEST_CASE("the decision figure draws each class and the overall row with the threshold") {
  report::DecisionView d;
  d.candidate = "03";
  d.best = "01";
  d.verdict = "regression";
  d.threshold = 0.02;
  d.classes = {{"small", 0.05, std::make_pair(0.03, 0.07), "worse"},
               {"large", 0.001, std::make_pair(-0.01, 0.012), "tie"}};
  d.overall = report::ClassChange{"overall", 0.02, std::make_pair(0.01, 0.03), "tie"};
  auto figure = report::decision_figure(d);
  REQUIRE(figure);
  CHECK(figure->marks == 3);
  CHECK(figure->title == "The latest decision: candidate 03 vs BEST 01: regression");
  CHECK(figure->html.find("grey band: the tie band, noise threshold \u00b12.0%") !=
        std::string::npos);
  CHECK(figure->html.find("+5.0% [+3.0%, +7.0%]  worse") != std::string::npos);
}

TEST_CASE("the heatmap has a cell per usable kernel and shape; the tuned one is outlined") {
  auto figure = report::heatmap_figure(table());
  REQUIRE(figure);
  CHECK(figure->marks == 3); // k2 on the first shape failed the golden: a grey box, no mark
  CHECK(figure->html.find("M=512,N=64,K=64, k1: 30 us, 1.5x the shape&#39;s fastest") !=
        std::string::npos);
  CHECK(figure->html.find("(tuned choice)") != std::string::npos);
}

TEST_CASE("the region map marks every shape and rings each miss") {
  kopt::heuristic::Results results = table();
  kopt::heuristic::RuleList rules; // no rules: the default k1 everywhere misses the second shape
  auto evaluation = kopt::heuristic::evaluate_rules(results, rules, "k1", 0.01);
  auto figure = report::region_figure(results, rules, "k1", evaluation, "family.json");
  REQUIRE(figure);
  CHECK(figure->marks == 3); // two shapes and one miss
  CHECK(figure->html.find("data-miss=\"1.5\"") != std::string::npos);
  CHECK(figure->html.find("the heuristic picks k1, tuned is k2, 1.5x slower") != std::string::npos);
  CHECK(figure->html.find("N*K (log scale)") != std::string::npos);
}

TEST_CASE("the waterfall puts overlapping commands on separate lanes and marks the budget") {
  std::vector<kopt::buildinfo::LoggedCommand> commands = {
      {{"a.o"}, "h1", 0, 2000}, {{"b.o"}, "h2", 500, 1500}, {{"app"}, "h3", 2000, 2600}};
  kopt::buildinfo::BuildReport build;
  build.tus = {{"a.o", "fam", "00", "", 2, kopt::buildinfo::CacheResult::direct_hit},
               {"b.o", "fam", "00", "", 1, kopt::buildinfo::CacheResult::miss}};
  build.families = {{"fam", 2, 3, 2.6, 1, 1}};
  auto figure = report::waterfall_figure(commands, build, "fam", 4);
  REQUIRE(figure);
  CHECK(figure->marks == 3);
  CHECK(figure->html.find("job 2") != std::string::npos);
  CHECK(figure->html.find("job 3") == std::string::npos); // the link reuses a free lane
  CHECK(figure->html.find("data-cache=\"direct_hit\"") != std::string::npos);
  CHECK(figure->html.find("data-cache=\"miss\"") != std::string::npos);
  CHECK(figure->html.find("fam build budget 4 s (compile_budget_s), its wall time 2.6 s") !=
        std::string::npos);
  CHECK(figure->html.find("Compile waterfall of the last build: 2.6 s, 1 of 2 objects from the "
                          "cache") != std::string::npos);
  CHECK(figure->html.find("build wall-time budget, compile_budget_s in its family.json (4 s)") !=
        std::string::npos);
  // A budget far beyond the build is named at the edge, not drawn as a line that squeezes the bars.
  auto far = report::waterfall_figure(commands, build, "fam", 90);
  REQUIRE(far);
  CHECK(far->html.find("fam build budget 90 s (compile_budget_s), its wall time 2.6 s: ends at "
                       "90 s, off this scale") != std::string::npos);
  CHECK(far->html.find("stroke-dasharray=\"6 4\"") == std::string::npos);
}

TEST_CASE("a state folder with nothing yet gives a page that says what is missing") {
  TempDir tmp;
  kopt::spec::Family family = kopt::spec::load_family(fixture("gen/tiny/family.json"));
  kopt::spec::Layout layout(tmp.path());
  report::ReportOptions options;
  options.date = "2026-11-25";
  report::Page page = report::make_report(family, layout, options);
  CHECK(page.figures.empty());
  CHECK(page.not_shown.size() == 6);
  CHECK(page.html.find("kopt report: tiny") != std::string::npos);
  CHECK(page.html.find("http") == std::string::npos);
  CHECK(page.html.find("<script") == std::string::npos);
}

TEST_CASE("--tune-candidate is a candidate id, never a path out of the state folder") {
  TempDir tmp;
  kopt::spec::Family family = kopt::spec::load_family(fixture("gen/tiny/family.json"));
  kopt::spec::Layout layout(tmp.path() / "state");
  fs::create_directories(layout.root / "tune");
  tmp.write("outside/full.csv", "M,N,K,kernel,us,err\n16,64,64,k1,10,0\n");
  report::ReportOptions options;
  options.tune_candidate = "../../outside";
  CHECK_THROWS_WITH_AS(report::make_report(family, layout, options),
                       "report: --tune-candidate: unknown candidate '../../outside' (expected a "
                       "candidate id: two or more digits)",
                       kopt::Error);
}

TEST_CASE("svg helpers: escaping, numbers, scales, ticks") {
  CHECK(report::num(31000.4) == "31000");
  CHECK(report::num(1.23456) == "1.235");
  CHECK(report::percent(0.05) == "+5.0%");
  CHECK(report::percent(30.5) == "+3050%");
  CHECK(report::percent(-0.0012) == "-0.12%");
  CHECK(report::percent(0) == "0%");
  CHECK(report::escape("a<b & \"c\"") == "a&lt;b &amp; &quot;c&quot;");
  report::Scale linear(0, 10, 100, 200);
  CHECK(linear(5) == 150);
  CHECK(linear.ticks(5) == std::vector<double>{0, 2, 4, 6, 8, 10});
  report::Scale log(16, 1024, 0, 600, true);
  CHECK(log(128) == doctest::Approx(300));
  CHECK(log.ticks(6) == std::vector<double>{16, 32, 64, 128, 256, 512, 1024});
  report::Scale narrow(0.98, 1.03, 0, 100, true); // under 4x: round values, not powers of 2
  CHECK(narrow.ticks(5) == std::vector<double>{0.98, 1, 1.02});
}

TEST_CASE("the report shows the states decide recorded, whatever the threshold says now") {
  // +0.5% [+0.2%, +0.8%] was a tie under the 1% threshold it was decided with; under 0.1% it
  // would read as worse. The recorded overall_state stands; a line without one is judged again.
  std::string line =
      R"({"kind":"attempt","date":"d1","candidate":"07","hash":"c1","best":"00","best_hash":"aa","proposal":"","target":"global","hypothesis":"h","verdict":"tie","reason":"","consecutive_regressions":0,"overall_change":0.005,"overall_interval":[0.002,0.008],"overall_state":"tie","classes":[{"class":"small","change":0.005,"interval":[0.002,0.008],"state":"tie"}],"event":""})";
  std::string loop =
      std::string(
          R"({"kind":"baseline","date":"d0","candidate":"00","hash":"aa","geomean_us":12.5,"measured_by":"chrono"})") +
      "\n" + line + "\n";
  TempDir tmp;
  for (double threshold : {0.01, 0.001}) {
    CAPTURE(threshold);
    auto figure =
        report::history_figure(report::read_attempts(tmp.write("a.jsonl", loop)), threshold);
    REQUIRE(figure);
    std::string row = figure->html.substr(figure->html.find("<tr data-attempt=\"07\">"));
    row = row.substr(0, row.find("</tr>"));
    CHECK(row.find(">+0.50%</b> tie<br><small>[+0.20%, +0.80%]</small></td><td>h</td>") !=
          std::string::npos);
  }
  std::string old = line;
  old.erase(old.find(R"("overall_state":"tie",)"), std::string(R"("overall_state":"tie",)").size());
  auto figure = report::history_figure(
      report::read_attempts(tmp.write("b.jsonl", loop.substr(0, loop.find('\n') + 1) + old + "\n")),
      0.001);
  REQUIRE(figure);
  CHECK(figure->html.find(">+0.50%</b> worse<br><small>[+0.20%, +0.80%]</small></td><td>h</td>") !=
        std::string::npos);
}

TEST_SUITE_END();
