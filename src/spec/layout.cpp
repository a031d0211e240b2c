#include "spec/layout.hpp"

namespace kopt::spec {

Layout::Layout(std::filesystem::path root_dir, std::filesystem::path ledger_dir)
    : root(std::move(root_dir)), ledger(ledger_dir.empty() ? root / "ledger" : ledger_dir) {}

} // namespace kopt::spec
