// Whole-file reads and writes of the file formats (.npy, .npz, safetensors), with errors that name
// the op and the file.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace lf::detail {

// Throws lf::Error "lf::<op>: <path>: <message>".
[[noreturn]] void file_error(const char* op, const std::string& path, const std::string& message);
// The parts, one after another, as the file's new contents.
void write_file(const char* op, const std::string& path, const std::vector<std::pair<const char*, size_t>>& parts);
std::vector<char> read_file(const char* op, const std::string& path);

}  // namespace lf::detail
