#include "util/progress.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <sys/ioctl.h>
#include <unistd.h>

namespace kopt::util {

namespace {

class NoProgress : public Progress {
public:
  void begin(std::string_view, size_t) override {}
  void starting(std::string_view) override {}
  void advance(size_t, std::string_view) override {}
  void note(std::string_view) override {}
  void end() override {}
};

double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// "\r" goes to the line's start and ESC[K erases what an older, longer line left to its right.
constexpr std::string_view kReturn = "\r";
constexpr std::string_view kEraseRight = "\x1b[K";

} // namespace

Progress &Progress::none() {
  static NoProgress none;
  return none;
}

StatusStyle status_style(int fd, bool quiet) {
  if (quiet) {
    return StatusStyle::quiet;
  }
  const char *term = std::getenv("TERM");
  bool dumb = term != nullptr && std::string_view(term) == "dumb";
  return isatty(fd) != 0 && !dumb ? StatusStyle::terminal : StatusStyle::lines;
}

int terminal_width(int fd) {
  winsize size{};
  if (ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return size.ws_col;
  }
  return 0;
}

std::string format_duration(double seconds) {
  long s = seconds > 0 ? static_cast<long>(seconds + 0.5) : 0;
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  }
  return text;
}

std::string status_text(size_t done, size_t total, double elapsed_s, std::string_view detail) {
  std::string text = "[" + std::to_string(done) + "/" + std::to_string(total) + "] elapsed " +
                     format_duration(elapsed_s);
  if (done > 0 && total >= done) {
    double left = elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
    text += ", ~" + format_duration(left) + " left";
  }
  if (!detail.empty()) {
    text += ": ";
    text += detail;
  }
  return text;
}

StatusLine::StatusLine(std::ostream &out, StatusStyle style, int width, Clock now)
    : out_(out), style_(style), width_(width), now_(now ? std::move(now) : steady_seconds) {
  start_ = now_();
}

StatusLine::~StatusLine() {
  if (drawn_) {
    out_ << "\n" << std::flush; // an exception left the status line open
  }
}

void StatusLine::begin(std::string_view what, size_t total) {
  done_ = 0;
  total_ = total;
  start_ = now_();
  if (style_ == StatusStyle::lines && !what.empty()) {
    out_ << what << "\n" << std::flush;
  } else if (style_ == StatusStyle::terminal) {
    draw(what);
  }
}

void StatusLine::starting(std::string_view detail) {
  if (style_ == StatusStyle::terminal) {
    draw(detail);
  }
}

void StatusLine::advance(size_t units, std::string_view detail) {
  done_ += units;
  if (style_ == StatusStyle::lines) {
    out_ << status_text(done_, total_, now_() - start_, detail) << "\n" << std::flush;
  } else if (style_ == StatusStyle::terminal) {
    draw(detail);
  }
}

void StatusLine::note(std::string_view line) {
  if (style_ == StatusStyle::quiet) {
    return;
  }
  if (drawn_) {
    out_ << kReturn << kEraseRight;
  }
  out_ << line << "\n";
  if (drawn_) {
    draw("");
  }
  out_ << std::flush;
}

void StatusLine::end() {
  if (drawn_) {
    out_ << "\n" << std::flush;
    drawn_ = false;
  }
}

void StatusLine::draw(std::string_view detail) {
  std::string text = status_text(done_, total_, now_() - start_, detail);
  if (width_ > 1 && text.size() >= static_cast<size_t>(width_)) {
    text.resize(static_cast<size_t>(width_) - 1); // the cursor must not wrap to a new line
  }
  out_ << kReturn << text << kEraseRight << std::flush;
  drawn_ = true;
}

} // namespace kopt::util
