// parse_json (depth and duplicate-key pre-scans, then nlohmann) against nlohmann's parse alone
// and against a parse whose callback checks depth and keys (no positions).
#include "util/json_file.hpp"
#include "util/read_file.hpp"
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>
int main(int argc, char **argv) {
  std::string text = kopt::util::read_file(argv[1]);
  auto time = [&](auto f) {
    double best = 1e9;
    for (int i = 0; i < 7; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      f();
      best = std::min(
          best,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  double a = time([&] { auto j = kopt::util::parse_json(text, "f"); });
  double b = time([&] { auto j = nlohmann::json::parse(text); });
  double c = time([&] {
    std::vector<std::set<std::string>> keys;
    auto j = nlohmann::json::parse(
        text, [&](int depth, nlohmann::json::parse_event_t e, nlohmann::json &v) {
          using E = nlohmann::json::parse_event_t;
          if (e == E::object_start || e == E::array_start) {
            if (depth > 64)
              throw std::runtime_error("deep");
            keys.emplace_back();
          } else if (e == E::object_end || e == E::array_end)
            keys.pop_back();
          else if (e == E::key && !keys.back().insert(v.get<std::string>()).second)
            throw std::runtime_error("dup");
          return true;
        });
  });
  std::printf("%zu bytes: parse_json %.2f ms, nlohmann alone %.2f ms, nlohmann with a checking "
              "callback %.2f ms\n",
              text.size(), a, b, c);
}
