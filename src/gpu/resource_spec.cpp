#include "gpu/resource_spec.hpp"

#include "util/json_file.hpp"

#include <string>

namespace kopt::gpu {

nlohmann::json resource_spec(const std::vector<int> &gpus) {
  nlohmann::json entries = nlohmann::json::array();
  for (int gpu : gpus) {
    entries.push_back({{"id", std::to_string(gpu)}, {"slots", 1}});
  }
  return {{"version", {{"major", 1}, {"minor", 0}}},
          {"local", nlohmann::json::array({{{"gpus", entries}}})}};
}

void write_resource_spec(const std::filesystem::path &path, const std::vector<int> &gpus) {
  util::write_json_atomic(path, resource_spec(gpus));
}

} // namespace kopt::gpu
