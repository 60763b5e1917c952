// The library kernels' cubins in the persistent kernel cache: the CUDA C of the sort, scan,
// scatter, attention and convolution kernels is fixed per variant (their sources are built from a
// few parameters, not from a trace), so a process that runs one compiles it with NVRTC once and
// every later process loads the stored cubin (tens of milliseconds a kernel saved at a warm first
// call). Entries sit beside the fused kernels' (`lazyfuse-cache list` shows them, backend "cuda",
// summary "library <entry>").
#pragma once

#include <string>
#include <vector>

#include "runtime/status.h"

namespace lf::cuda {

// `source` compiled for `arch` with the optimized build, its entry point `entry`: from the
// persistent cache when it holds exactly this source for this architecture, NVRTC and driver
// version, else by NVRTC (then stored). The compiler's log goes to *log (the stored one on a load);
// *from_disk (when given) says which.
// `refresh`: compile even when an entry exists, and replace it (its cubin did not load).
lf::StatusOr<std::vector<char>> library_cubin(const std::string& source, const std::string& entry,
                                              const std::string& arch, std::string* log, bool* from_disk = nullptr,
                                              bool refresh = false);

// library_cubin's cubin loaded into `device`'s context (made current): a stored cubin the driver
// refuses is compiled again, replaced and loaded, with one warning, never trusted.
lf::StatusOr<void*> library_module(const std::string& source, const std::string& entry, const std::string& arch,
                                   int device, std::string* log);

}  // namespace lf::cuda
