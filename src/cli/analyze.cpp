#include "profile/analyze.hpp"
#include "cli/family_options.hpp"
#include "cli/progress.hpp"
#include "cli/subcommands.hpp"
#include "util/json_file.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>

namespace kopt::cli {

namespace {

struct AnalyzeOptions {
  FamilyOptions family;
  std::string candidate;
  std::string ncu_output; ///< parse this saved ncu output instead of running ncu
  bool quiet = false;
};

void print_analysis(const std::string &id, const profile::Analysis &a, std::ostream &out) {
  out << "candidate " << id << ", hottest kernel " << a.kernel << "\n"
      << a.headline << "\n"
      << a.report;
  if (!a.measured.is_null()) {
    out << "measured: hash " << a.measured["hash"].get<std::string>().substr(0, 8) << " on "
        << a.measured["device"].get<std::string>() << " (driver "
        << a.measured["driver"].get<std::string>() << "), ncu, warmup 0, repeat 1\n";
  }
}

} // namespace

Handler setup_analyze(CLI::App &app) {
  auto options = std::make_shared<AnalyzeOptions>();
  options->family.add_to(app);
  app.add_option("--candidate", options->candidate, "the candidate whose harness to profile")
      ->required();
  app.add_option("--ncu-output", options->ncu_output,
                 "parse this saved `ncu --csv --page details` output instead of running ncu");
  add_quiet_option(app, options->quiet);
  return [options](Context &context) {
    LoadedFamily loaded = load_family(options->family);
    profile::AnalyzeRequest request;
    request.candidate = loaded.candidates.get(options->candidate).id();
    request.expected_hash = loaded.candidates.content_hash(loaded.family, request.candidate);
    request.ncu_output = options->ncu_output;
    util::RealProcessRunner runner;
    std::unique_ptr<util::StatusLine> progress = status_line(context, options->quiet);
    std::optional<profile::Analysis> analysis = profile::analyze(
        loaded.family, loaded.layout, request, runner,
        [&] { return gpu_setup(loaded, options->family.gpu_wait_min, context.err); }, context.err,
        *progress);
    if (!analysis) {
      return 1;
    }
    if (context.json) {
      context.out << util::dump_json(analysis->json) << "\n"; // names may not be UTF-8
    } else {
      print_analysis(request.candidate, *analysis, context.out);
    }
    return 0;
  };
}

} // namespace kopt::cli
