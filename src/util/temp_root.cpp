#include "util/temp_root.hpp"

#include "util/error.hpp"

#include <cstdlib>

namespace kopt::util {

std::filesystem::path temp_root() {
  std::error_code ec;
  std::filesystem::path root = std::filesystem::temp_directory_path(ec);
  if (!ec) {
    return root;
  }
  for (const char *name : {"TMPDIR", "TMP", "TEMP", "TEMPDIR"}) {
    const char *value = std::getenv(name);
    if (value != nullptr && *value != '\0') {
      throw Error(std::string(name) + "=" + value + ": not a folder kopt can make temporary " +
                  "files in (" + ec.message() + "): set " + name +
                  " to an existing folder, or unset it to use /tmp");
    }
  }
  throw Error("/tmp: not a folder kopt can make temporary files in (" + ec.message() +
              "): set TMPDIR to an existing folder");
}

} // namespace kopt::util
