#pragma once

// How long the spin kernel runs, relative to the baseline: the one number the calibration
// candidates change (0.98 is a 2% faster kernel, 1.01 a 1% slower one).
constexpr double kSpinScale = 0.98;
