#include "kopt/harness/identity.hpp"

#include <filesystem>
#include <fstream>

namespace kopt::harness {

namespace {

std::filesystem::path self() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec);
}

} // namespace

std::string executable_candidate_id() {
  const std::string name = self().stem().string();
  const std::string prefix = "candidate_";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

std::string executable_candidate_hash() {
  std::ifstream in(self().string() + ".kopt-hash");
  std::string hash;
  in >> hash;
  return hash;
}

} // namespace kopt::harness
