#pragma once

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

namespace kopt::gpu {

/// Returns ctest's resource spec (version 1.0) with resource type "gpus": one entry per GPU
/// index in `gpus`, each with 1 slot, so `ctest -j N` never puts two candidates on one GPU.
nlohmann::json resource_spec(const std::vector<int> &gpus);

/// Writes resource_spec(gpus) to `path` atomically (for ctest --resource-spec-file).
void write_resource_spec(const std::filesystem::path &path, const std::vector<int> &gpus);

} // namespace kopt::gpu
