// Whole-file reads and writes (frontend/file_io.h).
#include "frontend/file_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "lazyfuse/types.h"

namespace lf::detail {

void file_error(const char* op, const std::string& path, const std::string& message) {
  throw Error("lf::" + std::string(op) + ": " + path + ": " + message);
}

namespace {

// A path that exists and is not a regular file (a directory, a FIFO, a device) is refused before
// it is opened: reading a FIFO would wait for a writer, and a directory's "size" is no size.
void check_regular(const char* op, const std::string& path, bool must_exist) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (must_exist) file_error(op, path, std::string("cannot open: ") + std::strerror(errno));
    return;
  }
  if (!S_ISREG(st.st_mode))
    file_error(op, path, S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file (a FIFO, socket or device)");
}

}  // namespace

// Written to a temporary file beside the target and renamed over it: a full disk or a crash leaves
// the old file whole, never a half-written one (the kernel cache writes its entries the same way).
void write_file(const char* op, const std::string& path, const std::vector<std::pair<const char*, size_t>>& parts) {
  check_regular(op, path, false);
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) file_error(op, path, std::string("cannot open for writing: ") + std::strerror(errno));
    for (auto [p, n] : parts) f.write(p, static_cast<std::streamsize>(n));
    f.flush();
    if (!f) {
      const int err = errno;
      f.close();
      std::remove(tmp.c_str());
      file_error(op, path, std::string("write failed: ") + std::strerror(err));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    file_error(op, path, std::string("cannot replace the file: ") + std::strerror(err));
  }
}

std::vector<char> read_file(const char* op, const std::string& path) {
  check_regular(op, path, true);
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
