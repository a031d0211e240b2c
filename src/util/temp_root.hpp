#pragma once

#include <filesystem>

namespace kopt::util {

/// The folder kopt makes its temporary files in: TMPDIR (else TMP, TEMP, TEMPDIR), else /tmp, as
/// std::filesystem::temp_directory_path finds it. One that is no folder is a kopt::Error that
/// names the variable and its value, and says what to do.
std::filesystem::path temp_root();

} // namespace kopt::util
