#include "decide/check.hpp"

#include "buildinfo/ninja_deps.hpp"
#include "decide/decide.hpp"
#include "decide/identity.hpp"
#include "util/file_lock.hpp"

namespace kopt::decide {

std::vector<std::string> identity_problems(const spec::Family &family,
                                           const candidate::CandidateSet &candidates,
                                           const spec::Layout &layout, const std::string &id,
                                           const std::string &baseline,
                                           const std::string &build_dir, const std::string &prefix,
                                           util::ProcessRunner &runner) {
  util::Command command{{"ninja", "-C", build_dir, "-t", "deps"}, {}, {}, 120};
  util::ProcessResult result = runner.run(command);
  if (!result.ok()) {
    return {"`ninja -C " + build_dir + " -t deps` " + result.describe(120)};
  }
  std::vector<std::filesystem::path> foreign;
  for (const auto &c : candidates.all()) {
    foreign.push_back(c.dir);
  }
  buildinfo::NinjaDeps deps =
      buildinfo::parse_ninja_deps(result.out, std::filesystem::absolute(build_dir));
  IdentityScope scope{id, baseline, prefix + "candidate_" + id, build_dir};
  std::vector<std::string> problems =
      buildinfo::check_identity(deps, scope.target, layout.gen_root(), layout.gen_dir(id),
                                family.kernel_header, foreign)
          .problems;
  if (!problems.empty()) {
    return problems; // objects of other sources: what they define proves nothing
  }
  problems = symbol_problems(family, candidates, layout, scope, deps, runner);
  for (auto &problem : expansion_problems(family, layout, scope, deps, runner)) {
    problems.push_back(std::move(problem));
  }
  return problems;
}

CheckResult check_candidate(const spec::Family &family, const candidate::CandidateSet &candidates,
                            const spec::Layout &layout, const CheckRequest &request,
                            util::ProcessRunner &runner, const profile::RunSetup &setup,
                            std::ostream &err) {
  CheckResult result;
  result.id = candidates.get(request.id).id();
  util::FileLock lock(layout.lock("results-" + result.id), &err);
  std::string golden =
      profile::ensure_golden(family, layout, request.baseline,
                             candidates.content_hash(family, request.baseline), runner, setup);
  if (golden.starts_with("golden remade")) {
    err << "kopt: " << golden << "\n";
  }
  result.expected_hash = candidates.content_hash(family, result.id);

  if (!request.build_dir.empty()) {
    for (const auto &p : identity_problems(family, candidates, layout, result.id, request.baseline,
                                           request.build_dir, request.prefix, runner)) {
      result.problems.push_back("identity: " + p);
    }
  }
  profile::Measurement m = profile::run_harness(family, layout, result.id,
                                                profile::HarnessMode::correctness, runner, setup);
  for (const auto &p : correctness_problems(m, result.id, result.expected_hash)) {
    result.problems.push_back(p);
  }
  result.hash = m.hash;
  result.configs = m.configs.size();
  return result;
}

} // namespace kopt::decide
