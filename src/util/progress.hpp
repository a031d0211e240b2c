#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace kopt::util {

/// Where a long step (bench rounds, tune chunks, a calibration) says how far it is: a total of
/// units, then each unit as it ends. The library reports through it; the CLI decides how it shows.
class Progress {
public:
  virtual ~Progress() = default;

  /// A step of `total` units begins; `what` names it ("tune: 130 rows to measure").
  virtual void begin(std::string_view what, size_t total) = 0;

  /// A unit is about to start (shown on a terminal, so a slow one is not a frozen screen).
  virtual void starting(std::string_view detail) = 0;

  /// `units` more units are done; `detail` says which ("gemm_16x64x64 configs 1-5").
  virtual void advance(size_t units, std::string_view detail) = 0;

  /// A line that must stay on the screen (a failure), printed above the status line.
  virtual void note(std::string_view line) = 0;

  /// The step ended: a status line on a terminal is finished with a newline.
  virtual void end() = 0;

  /// A Progress that shows nothing.
  static Progress &none();
};

/// How a StatusLine shows progress.
enum class StatusStyle {
  terminal, ///< one line rewritten in place, as ninja does ("\r", the line, ESC[K)
  lines,    ///< one plain line per unit and note, no control characters (a pipe, a log file)
  quiet     ///< nothing at all (--quiet)
};

/// Returns terminal when file descriptor `fd` is a terminal (and TERM is not "dumb"), else
/// lines; quiet when `quiet`.
StatusStyle status_style(int fd, bool quiet);

/// Returns the width of the terminal on `fd`, or 0 when unknown.
int terminal_width(int fd);

/// Formats seconds as m:ss, or h:mm:ss from an hour on.
std::string format_duration(double seconds);

/// The status line's text: `[done/total] elapsed 0:12, ~0:28 left: <detail>`; the time left is
/// the elapsed time per unit done times the units left, and absent before the first unit.
std::string status_text(size_t done, size_t total, double elapsed_s, std::string_view detail);

/// A Progress that writes to `out` in `style`; `now` returns seconds on a steady clock (tests
/// give a fake). `width` > 0 cuts a terminal's status line to fit.
class StatusLine : public Progress {
public:
  using Clock = std::function<double()>;

  StatusLine(std::ostream &out, StatusStyle style, int width = 0, Clock now = {});
  ~StatusLine() override;

  void begin(std::string_view what, size_t total) override;
  void starting(std::string_view detail) override;
  void advance(size_t units, std::string_view detail) override;
  void note(std::string_view line) override;
  void end() override;

private:
  void draw(std::string_view detail);

  std::ostream &out_;
  StatusStyle style_;
  int width_;
  Clock now_;
  double start_ = 0;
  size_t done_ = 0;
  size_t total_ = 0;
  bool drawn_ = false; ///< a status line is on the screen, not yet ended with a newline
};

} // namespace kopt::util
