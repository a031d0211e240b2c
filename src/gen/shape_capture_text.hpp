#pragma once

namespace kopt::gen {

/// Returns the text of src/gen/shape_capture.h, which gen-instances writes as kopt_capture.h.
const char *shape_capture_header();

} // namespace kopt::gen
