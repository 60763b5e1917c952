// The host FFT (ir::Op::Fft): our own mixed-radix Cooley-Tukey (radices 4, 2, 3, 5 and any small
// prime, as kissfft) and Bluestein's chirp-z for lengths with a prime factor above 13, in float64
// with float64 twiddles whatever the node's dtype, lines spread over the thread pool. The CPU's
// path, and a GPU's until cuFFT is wired (the executor copies the lines to the host).
#pragma once

#include <cstdint>
#include <string>

#include "codegen/reference/fft.h"

namespace lf::backend::fft {

// Computes every line of `p`.
void run(const ir::FftProblem& p);

// How a length is transformed, for the log: "radix 4x4x2", "Bluestein (radix 4x4x4x2)".
std::string describe(int64_t n);

}  // namespace lf::backend::fft
