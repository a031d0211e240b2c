#include "cli/subcommands.hpp"
#include "gen/scaffold.hpp"
#include "util/json_file.hpp"

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <ostream>

namespace kopt::cli {

namespace {

struct InitOptions {
  std::string dir;
  std::string name;
  std::string backend = "host";
  std::string arch;
};

} // namespace

Handler setup_init(CLI::App &app) {
  auto options = std::make_shared<InitOptions>();
  app.add_option("dir", options->dir, "the new family's folder (made; files there are kept)")
      ->required();
  app.add_option("--name", options->name,
                 "the family's name, an identifier (default: the folder's name)");
  app.add_option("--backend", options->backend, "host, cuda or hip")
      ->check(CLI::IsMember({"host", "cuda", "hip"}))
      ->capture_default_str();
  app.add_option("--arch", options->arch,
                 "the GPU architecture: cuda's CMAKE_CUDA_ARCHITECTURES (default 90a), hip's "
                 "offload arch (default gfx942)");
  return [options](Context &context) {
    gen::ScaffoldRequest request;
    request.dir = options->dir;
    request.name = options->name.empty()
                       ? std::filesystem::path(options->dir).lexically_normal().filename().string()
                       : options->name;
    request.backend = options->backend == "cuda"  ? spec::Backend::cuda
                      : options->backend == "hip" ? spec::Backend::hip
                                                  : spec::Backend::host;
    request.arch = options->arch;
    std::vector<std::filesystem::path> written = gen::write_scaffold(request);
    if (context.json) {
      nlohmann::json files = nlohmann::json::array();
      for (const auto &path : written) {
        files.push_back(path.string());
      }
      context.out << util::dump_json({{"family", request.name}, {"files", files}}) << "\n";
      return 0;
    }
    context.out << "kopt init: wrote the " << request.name << " family (" << options->backend
                << ") in " << options->dir << ":\n";
    for (const auto &path : written) {
      context.out << "  " << path.string() << "\n";
    }
    context.out
        << "Next:\n"
        << "  add_subdirectory(" << options->dir
        << ") in your CMakeLists.txt, or configure it on its own:\n"
        << "  cmake -S " << options->dir << " -B build -G Ninja -DCMAKE_BUILD_TYPE=Release\n"
        << "  cd build && kopt round --id 00        # the baseline: build, measure, record\n"
        << "  kopt new --id 01 --base 00 --from-patch change.diff --hypothesis '...'\n"
        << "                                         # a candidate: your edit of the kernel\n"
        << "  kopt round --id 01                     # a verdict against BEST\n";
    return 0;
  };
}

} // namespace kopt::cli
