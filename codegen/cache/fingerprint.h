// A fingerprint of the code generators' sources (computed by CMake): part of every kernel cache
// key, so a persistent cache never hands a kernel built by other generator code to this build.
#pragma once

namespace lf {

const char* codegen_fingerprint();

}  // namespace lf
