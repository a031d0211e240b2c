#include "cli/progress.hpp"

#include <unistd.h>

namespace kopt::cli {

std::unique_ptr<util::StatusLine> status_line(Context &context, bool quiet) {
  util::StatusStyle style = util::status_style(STDERR_FILENO, quiet);
  return std::make_unique<util::StatusLine>(context.err, style,
                                            util::terminal_width(STDERR_FILENO));
}

} // namespace kopt::cli
