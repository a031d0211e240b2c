#include "spec/candidate_spec.hpp"

#include "spec/fields.hpp"
#include "util/error.hpp"
#include "util/json_file.hpp"
#include "util/text.hpp"

namespace kopt::spec {

namespace {

bool is_candidate_id(const std::string &text) {
  return text.size() >= 2 && text.size() <= max_candidate_id_size && util::is_digits(text);
}

} // namespace

std::string candidate_id_rule() {
  return "two to " + std::to_string(max_candidate_id_size) + " digits";
}

bool is_canonical_candidate_id(const std::string &text) {
  return is_candidate_id(text) && (text.size() == 2 || text[0] != '0');
}

CandidateSpec load_candidate_spec(const std::filesystem::path &file,
                                  const std::string &folder_name) {
  nlohmann::json json = util::read_json(file);
  Fields fields(json, file.string(), "");
  fields.reject_unknown({"id", "base", "hypothesis", "target", "proposal"});
  CandidateSpec spec;
  spec.id = fields.string("id");
  if (!is_candidate_id(spec.id)) {
    throw Error(fields.where("id") + ": expected " + candidate_id_rule() + ", got '" +
                util::excerpt(spec.id) + "'");
  }
  if (spec.id != folder_name) {
    throw Error(fields.where("id") + ": '" + spec.id + "' does not match the folder name '" +
                folder_name + "'");
  }
  spec.base = fields.string_or("base", "");
  if (fields.has("base") && !is_candidate_id(spec.base)) {
    throw Error(fields.where("base") + ": expected a candidate id (" + candidate_id_rule() +
                "), got '" + util::excerpt(spec.base) + "'");
  }
  spec.hypothesis = fields.string_or("hypothesis", "");
  spec.target = fields.string_or("target", "global");
  if (spec.target.empty()) {
    throw Error(fields.where("target") + ": expected 'global' or a config class name, got ''");
  }
  spec.proposal = fields.string_or("proposal", spec.id);
  return spec;
}

} // namespace kopt::spec
