#pragma once

#include "cli/cli.hpp"
#include "util/progress.hpp"

#include <memory>

namespace kopt::cli {

/// The progress of a handler that runs harnesses: on stderr (stdout keeps the result), a status
/// line rewritten in place when stderr is a terminal, plain lines otherwise, nothing with
/// `quiet`.
std::unique_ptr<util::StatusLine> status_line(Context &context, bool quiet);

} // namespace kopt::cli
