#pragma once

#include "report/figures.hpp"
#include "spec/family.hpp"
#include "spec/layout.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kopt::report {

/// Where the report's data comes from beside the state folder.
struct ReportOptions {
  std::filesystem::path build_dir; ///< a ninja build folder for the compile waterfall; "": none
  std::filesystem::path heuristic; ///< a heuristic.json to map; "": the family's own rules
  std::string tune_candidate;      ///< whose tune/<id>/full.csv; "": the newest one
  std::string date;                ///< when the page was made (shown; "" for now)
};

/// A report page: its figures (each drawn only when its data exists), why the others are not
/// there, and the self-contained HTML.
struct Page {
  std::vector<Figure> figures;
  std::vector<std::string> not_shown; ///< "tuning heatmap: no tune/*/full.csv (run kopt tune)"
  std::string html;
};

/// Reads the family's ledger, latest decision, tuning results, heuristic and build log and
/// draws the page from kopt's template report.html.in: one HTML file with inline SVG, no script
/// and no URL, readable offline.
Page make_report(const spec::Family &family, const spec::Layout &layout,
                 const ReportOptions &options);

} // namespace kopt::report
