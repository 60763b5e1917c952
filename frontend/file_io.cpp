// Whole-file reads and writes (frontend/file_io.h).
#include "frontend/file_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "lazyfuse/types.h"

namespace lf::detail {

void file_error(const char* op, const std::string& path, const std::string& message) {
  throw Error("lf::" + std::string(op) + ": " + path + ": " + message);
}

void write_file(const char* op, const std::string& path, const std::vector<std::pair<const char*, size_t>>& parts) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) file_error(op, path, std::string("cannot open for writing: ") + std::strerror(errno));
  for (auto [p, n] : parts) f.write(p, static_cast<std::streamsize>(n));
  f.flush();
  if (!f) file_error(op, path, std::string("write failed: ") + std::strerror(errno));
}

std::vector<char> read_file(const char* op, const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) file_error(op, path, std::string("cannot open: ") + std::strerror(errno));
  std::streamsize size = f.tellg();
  if (size < 0) file_error(op, path, "cannot read its size");
  std::vector<char> out(static_cast<size_t>(size));
  f.seekg(0);
  if (size > 0 && !f.read(out.data(), size)) file_error(op, path, "read failed");
  return out;
}

}  // namespace lf::detail
