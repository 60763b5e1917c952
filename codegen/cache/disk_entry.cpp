#include "codegen/cache/disk_entry.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace lf::cache::disk {
namespace {

constexpr char kMagic[8] = {'L', 'F', 'K', 'C', 'A', 'C', 'H', 'E'};

void put_u64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t get_u64(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

void put_field(std::string& s, const std::string& f) {
  put_u64(s, f.size());
  s += f;
}

}  // namespace

uint64_t fnv1a64(const void* data, size_t n, uint64_t h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string encode(const Record& r) {
  std::string s(kMagic, sizeof kMagic);
  for (int i = 0; i < 4; ++i) s += static_cast<char>((kFormatVersion >> (8 * i)) & 0xff);
  char ms[64];
  std::snprintf(ms, sizeof ms, "%.6f", r.compile_ms);
  for (const std::string* f : {&r.key, &r.backend, &r.target, &r.name, &r.summary, &r.io, &r.source, &r.log})
    put_field(s, *f);
  put_field(s, ms);
  put_field(s, std::to_string(r.created));
  put_field(s, r.binary);
  put_field(s, r.quick ? "1" : "0");
  put_field(s, r.why);
  put_u64(s, fnv1a64(s.data(), s.size()));
  return s;
}

std::optional<Record> decode(const std::string& b, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<Record> {
    *why = w;
    return std::nullopt;
  };
  if (b.size() < sizeof kMagic + 4 + 8 || std::memcmp(b.data(), kMagic, sizeof kMagic) != 0)
    return fail("not a LazyFuse cache entry (bad magic or too short)");
  uint32_t version = 0;
  for (int i = 0; i < 4; ++i) version |= static_cast<uint32_t>(static_cast<unsigned char>(b[8 + i])) << (8 * i);
  if (version < kOldestReadVersion || version > kFormatVersion)
    return fail("format version " + std::to_string(version) + ", expected " + std::to_string(kOldestReadVersion) +
                " to " + std::to_string(kFormatVersion));
  size_t body = b.size() - 8;
  if (get_u64(b, body) != fnv1a64(b.data(), body)) return fail("checksum mismatch (truncated or corrupted)");
  Record r;
  r.version = version;
  std::string ms, created, quick;
  size_t at = 12;
  std::vector<std::string*> fields{&r.key, &r.backend, &r.target, &r.name, &r.summary, &r.io, &r.source, &r.log,
                                   &ms,    &created,   &r.binary, &quick};
  if (version >= 3) fields.push_back(&r.why);
  for (std::string* f : fields) {
    if (at + 8 > body) return fail("truncated field");
    uint64_t n = get_u64(b, at);
    at += 8;
    if (n > body - at) return fail("field runs past the end");
    f->assign(b, at, n);
    at += n;
  }
  if (at != body) return fail("trailing bytes after the last field");
  r.compile_ms = std::strtod(ms.c_str(), nullptr);
  r.created = std::strtoll(created.c_str(), nullptr, 10);
  if (quick != "0" && quick != "1") return fail("bad quick-build flag");
  r.quick = quick == "1";
  return r;
}

std::string key_hash(const std::string& key) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a64(key.data(), key.size())));
  return buf;
}

std::string file_name(const std::string& key) { return key_hash(key) + kEntrySuffix; }

int open_regular(const std::string& path, uint64_t max_bytes, std::string* why, bool write) {
  std::string ignored;
  if (!why) why = &ignored;
  int fd = ::open(path.c_str(), (write ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    *why = err == ELOOP ? "a symbolic link (cache files are regular files)" : std::strerror(err);
    errno = err;
    return -1;
  }
  struct stat st {};
  int err = 0;
  if (::fstat(fd, &st) != 0) {
    err = errno;
    *why = std::strerror(err);
  } else if (!S_ISREG(st.st_mode)) {
    err = EINVAL;
    *why = std::string("not a regular file (") +
           (S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) ? "a character device"
                                            : S_ISDIR(st.st_mode) ? "a directory"
                                            : S_ISSOCK(st.st_mode) ? "a socket"
                                                                   : "a special file") +
           ")";
  } else if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    err = EFBIG;
    *why = "larger than " + std::to_string(max_bytes) + " bytes (" + std::to_string(st.st_size) + ")";
  }
  if (err) {
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

std::optional<std::string> read_file(const std::string& path, std::string* why, uint64_t max_bytes) {
  std::string ignored;
  if (!why) why = &ignored;
  int fd = open_regular(path, max_bytes, why);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[1 << 16];
  int err = 0;
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      *why = std::strerror(err);
      break;
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      err = EFBIG;
      *why = "grew past " + std::to_string(max_bytes) + " bytes while being read";
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (err) {
    errno = err;
    return std::nullopt;
  }
  return out;
}

}  // namespace lf::cache::disk
