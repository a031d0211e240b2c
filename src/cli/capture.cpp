#include "capture/capture.hpp"
#include "cli/subcommands.hpp"
#include "spec/family.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

namespace kopt::cli {

namespace {

struct CaptureOptions {
  std::vector<std::string> files;
  std::string spec;
  std::string out;
};

} // namespace

Handler setup_capture(CLI::App &app) {
  auto options = std::make_shared<CaptureOptions>();
  app.require_subcommand(1);
  CLI::App *merge = app.add_subcommand(
      "merge", "sum capture files (KOPT_CAPTURE) into the family's configs file with a count "
               "column");
  merge->add_option("files", options->files, "capture files written under KOPT_CAPTURE")
      ->required();
  merge->add_option("--spec", options->spec, "the family.json whose dispatch columns to use")
      ->required();
  merge->add_option("--out", options->out, "the configs file to write (atomically)")->required();
  return [options](Context &context) {
    spec::Family family = spec::load_family(options->spec);
    std::vector<capture::CaptureFile> files;
    for (const auto &file : options->files) {
      files.push_back(capture::read_capture(file));
    }
    capture::MergedCapture merged = capture::merge_captures(files, family.dispatch, family.name);
    util::write_file_atomic(options->out, capture::configs_csv(merged));
    if (context.json) {
      context.out << util::dump_json(nlohmann::json{{"out", options->out},
                                                    {"files", options->files.size()},
                                                    {"shapes", merged.shapes.size()},
                                                    {"calls", merged.calls},
                                                    {"overflow", merged.overflow}})
                  << "\n";
    } else {
      context.out << options->out << ": " << merged.shapes.size() << " shapes, " << merged.calls
                  << " calls from " << options->files.size() << " capture file(s)\n";
    }
    if (merged.overflow > 0) {
      context.err << "kopt: warning: " << merged.overflow
                  << " calls had shapes beyond KOPT_CAPTURE_MAX and are not in " << options->out
                  << " (raise KOPT_CAPTURE_MAX)\n";
    }
    return 0;
  };
}

} // namespace kopt::cli
