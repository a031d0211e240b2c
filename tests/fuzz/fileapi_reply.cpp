// A CMake File API reply: the input holds the index, then the files it names (f1.json,
// f2.json, ...), separated by lines of "====" (split_files); read_reply reads them as kopt
// import does.
#include "fileapi/reply.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::filesystem::path build = kopt::fuzz::scratch() / "build";
  std::filesystem::path reply = build / ".cmake" / "api" / "v1" / "reply";
  std::error_code ec;
  std::filesystem::remove_all(reply, ec);
  std::vector<std::string_view> files = kopt::fuzz::split_files(kopt::fuzz::text_of(data, size));
  for (size_t i = 0; i < files.size() && i < 16; ++i) {
    kopt::fuzz::write(reply / (i == 0 ? "index-0.json" : "f" + std::to_string(i) + ".json"),
                      files[i]);
  }
  kopt::fuzz::expect_contract(reply.string(), [&] { kopt::fileapi::read_reply(build); });
  return 0;
}
