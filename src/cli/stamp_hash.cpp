#include "buildinfo/hash_stamp.hpp"
#include "cli/subcommands.hpp"
#include "util/atomic_file.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

namespace kopt::cli {

namespace {

struct StampOptions {
  std::string binary;
  std::string hash_file;
};

} // namespace

Handler setup_stamp_hash(CLI::App &app) {
  auto options = std::make_shared<StampOptions>();
  app.add_option("binary", options->binary, "the linked harness executable")->required();
  app.add_option("--hash-file", options->hash_file,
                 "the candidate's generated kopt_hash.txt (its content hash)")
      ->required();
  return [options](Context &context) {
    std::string hash(util::trim(util::read_file(options->hash_file)));
    buildinfo::stamp_hash(options->binary, hash);
    buildinfo::record_built_hash(options->binary,
                                 std::filesystem::path(options->hash_file).parent_path());
    if (context.json) {
      context.out << util::dump_json(nlohmann::json{{"binary", options->binary}, {"hash", hash}},
                                     -1)
                  << "\n";
    } else {
      context.out << options->binary << ": hash " << hash << "\n";
    }
    return 0;
  };
}

} // namespace kopt::cli
