#include "cli/subcommands.hpp"
#include "gen/scaffold.hpp"
#include "util/json_file.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
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

// The folder of the KernelOptConfig.cmake that belongs to this kopt: its build folder (kopt at
// <build>/src/kopt) or its install prefix's lib/cmake/KernelOpt; "" when neither is there.
std::filesystem::path package_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return {};
  }
  fs::path up = exe.parent_path().parent_path();
  for (const fs::path &dir :
       {up, up / "lib" / "cmake" / "KernelOpt", up / "lib64" / "cmake" / "KernelOpt"}) {
    if (fs::is_regular_file(dir / "KernelOptConfig.cmake", ec)) {
      return dir.lexically_normal();
    }
  }
  return {};
}

// What to do next, as commands that configure, build and test as printed: the project's top
// CMakeLists.txt needs enable_testing() for ctest to find the family's tests, and find_package
// needs kopt's package folder.
void print_next_steps(const std::string &dir, std::ostream &out) {
  std::filesystem::path package = package_dir();
  std::string kopt_dir =
      " -DKernelOpt_DIR=" + (package.empty()
                                 ? std::string("<the folder of kopt's KernelOptConfig.cmake>")
                                 : package.string());
  out << "Next, add to your project's CMakeLists.txt, after project() (a new one starts with "
         "cmake_minimum_required(VERSION 3.25) and project(<name> LANGUAGES CXX)):\n"
      << "  enable_testing()\n"
      << "  add_subdirectory(" << dir << ")\n"
      << "then, from your project's folder:\n"
      << "  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release" << kopt_dir << "\n"
      << "  cd build\n"
      << "  kopt round --id 00                     # the baseline: build, measure, record\n"
      << "  kopt new --id 01 --base 00 --from-patch change.diff --hypothesis '...'\n"
      << "  kopt round --id 01                     # a verdict against BEST\n"
      << "  ctest -L correctness                   # every candidate's output against the golden\n"
      << "Or configure the family as a project of its own:\n"
      << "  cmake -S " << dir << " -B build -G Ninja -DCMAKE_BUILD_TYPE=Release" << kopt_dir
      << "\n";
}

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
    print_next_steps(options->dir, context.out);
    return 0;
  };
}

} // namespace kopt::cli
