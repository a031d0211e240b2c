// No implementations beyond the family's own: bench/anchor.cu built without other sources.
#include "anchor_impl.hpp"

void paged_anchor::add_external_impls(Impls &) {}
