// Whole-file reads and writes of the file formats (.npy, .npz, safetensors), with errors that name
// the op and the file.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace lf::detail {

// Throws lf::Error "lf::<op>: <path>: <message>".
[[noreturn]] void file_error(const char* op, const std::string& path, const std::string& message);
// The parts, one after another, as the file's new contents.
void write_file(const char* op, const std::string& path, const std::vector<std::pair<const char*, size_t>>& parts);
std::vector<char> read_file(const char* op, const std::string& path);

// Bool elements as 0 and 1: a file may hold any byte for a bool (numpy reads every non-zero byte
// as true), and a copy made at import is the cheapest place to make them canonical once, so that
// data_ptr(), exports and saves see 0/1 too. (Memory viewed in place, from_blob and DLPack, cannot
// be rewritten: the reads normalize it instead; README, "Interop".)
inline void canonical_bools(void* p, size_t n) {
  auto* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = b[i] != 0;
}

}  // namespace lf::detail
