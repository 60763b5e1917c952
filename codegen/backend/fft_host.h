// The host FFT (ir::Op::Fft): our own mixed-radix Cooley-Tukey (radices 4, 2, 3 and any prime to
// 13, as kissfft), Bluestein's chirp-z for lengths with a larger prime factor, Bailey's four steps
// for lines of 2^14 or more, real transforms of even length as complex ones of half the length; in
// float64 with float64 twiddles whatever the node's dtype, lines spread over the thread pool. The
// CPU's path, and a GPU's until cuFFT is wired (the executor copies the lines to the host).
#pragma once

#include <cstdint>
#include <string>

#include "codegen/reference/fft.h"

namespace lf::backend::fft {

// Computes every line of `p`.
void run(const ir::FftProblem& p);

// How a transform is computed, for the log: "radix 4x4x2", "Bluestein over 2048 (radix 4x4x4x4x4x2)",
// "a complex transform of n / 2, radix 4x4".
std::string describe(const ir::FftParams& q);

}  // namespace lf::backend::fft
