#pragma once

// Everything a family's harness.cpp needs, in one include.
#include "kopt/harness/compare.hpp"
#include "kopt/harness/config.hpp"
#include "kopt/harness/error.hpp"
#include "kopt/harness/golden.hpp"
#include "kopt/harness/inputs.hpp"
#include "kopt/harness/problem.hpp"
#include "kopt/harness/run.hpp"
#include "kopt/harness/timer.hpp"
