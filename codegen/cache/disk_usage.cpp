#include "codegen/cache/disk_usage.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <thread>
#include <vector>

#include "codegen/cache/disk_entry.h"

namespace lf::cache::disk {
namespace {

// A lock is held for a few small reads and writes; one not had after this long belongs to a
// process that is stopped or stuck, and the caller gives up rather than wait for it.
constexpr auto kLockWait = std::chrono::seconds(1);

size_t slot_bytes(Book book) { return book == Book::Hits ? 64 : 512; }
const char* book_name(Book book) { return book == Book::Hits ? "lazyfuse-hits " : "lazyfuse-programs "; }

std::string hex16(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// A whole, plain decimal number (no sign, no spaces, no overflow).
std::optional<uint64_t> number(const std::string& s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

bool plain_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

struct Slot {
  uint64_t seq = 0;
  std::string payload;
  size_t index = 0;  // 0 or 1
};

// A slot is "lazyfuse-<book> <seq>\n", the payload, "check <FNV-1a 64 of all that>\n", then
// spaces and a newline up to the slot's size.
std::optional<Slot> decode_slot(Book book, const std::string& s) {
  size_t n = slot_bytes(book);
  if (s.size() != n || s.back() != '\n') return std::nullopt;
  size_t at = s.find("\ncheck ");
  if (at == std::string::npos || at + 1 + 23 > n - 1) return std::nullopt;
  std::string body = s.substr(0, at + 1);
  if (s.compare(at + 1 + 6, 16, hex16(fnv1a64(body.data(), body.size()))) != 0 || s[at + 1 + 22] != '\n')
    return std::nullopt;
  for (size_t i = at + 1 + 23; i + 1 < n; ++i)
    if (s[i] != ' ') return std::nullopt;
  std::string name = book_name(book);
  size_t eol = body.find('\n');
  if (body.compare(0, name.size(), name) != 0) return std::nullopt;
  auto seq = number(body.substr(name.size(), eol - name.size()));
  if (!seq) return std::nullopt;
  return Slot{*seq, body.substr(eol + 1), 0};
}

// The newer intact slot of a file's bytes.
std::optional<Slot> decode_file(Book book, const std::string& bytes, std::string* why) {
  size_t n = slot_bytes(book);
  auto fail = [&](const char* w) -> std::optional<Slot> {
    if (why) *why = w;
    return std::nullopt;
  };
  if (bytes.empty()) return fail("empty");
  if (bytes.size() > 2 * n) return fail("longer than two slots");
  std::optional<Slot> best;
  for (size_t i = 0; i < 2 && (i + 1) * n <= bytes.size(); ++i) {
    auto slot = decode_slot(book, bytes.substr(i * n, n));
    if (slot && (!best || slot->seq > best->seq)) {
      best = slot;
      best->index = i;
    }
  }
  if (!best) return fail(book == Book::Hits ? "not a hit count (no intact slot)" : "no intact slot");
  return best;
}

// flock() with retries until kLockWait; 0 or an errno (ETIMEDOUT: another process keeps it).
int lock(int fd, int op) {
  auto give_up = std::chrono::steady_clock::now() + kLockWait;
  auto pause = std::chrono::microseconds(50);
  while (::flock(fd, op | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return errno;
    if (std::chrono::steady_clock::now() > give_up) return ETIMEDOUT;
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(5));
  }
  return 0;
}

// The whole file from offset 0, at most `limit` bytes; nullopt on a read error.
std::optional<std::string> read_fd(int fd, size_t limit) {
  std::string out(limit, '\0');
  size_t done = 0;
  while (done < limit) {
    ssize_t n = ::pread(fd, out.data() + done, limit - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return out;
}

}  // namespace

std::string hits_name(const std::string& hash) { return hash + kHitsSuffix; }

std::string hits_payload(uint64_t hits) { return std::to_string(hits) + "\n"; }

std::optional<uint64_t> parse_hits(const std::string& payload) {
  if (payload.empty() || payload.back() != '\n') return std::nullopt;
  return number(payload.substr(0, payload.size() - 1));
}

std::string programs_payload(const ProgramUse& use) {
  std::string s = "since " + std::to_string(use.since) + "\n";
  for (const auto& [backend, b] : use.backends)
    s += "backend " + backend + " runs " + std::to_string(b.runs) + " loaded " + std::to_string(b.loaded) +
         " compiled " + std::to_string(b.compiled) + "\n";
  return s;
}

std::optional<ProgramUse> parse_programs(const std::string& payload, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<ProgramUse> {
    if (why) *why = w;
    return std::nullopt;
  };
  std::istringstream in(payload);
  std::string line;
  ProgramUse use;
  std::optional<uint64_t> since;
  if (!std::getline(in, line) || words(line).size() != 2 || words(line)[0] != "since" ||
      !(since = number(words(line)[1])))
    return fail("no 'since' line");
  use.since = static_cast<int64_t>(*since);
  while (std::getline(in, line)) {
    std::vector<std::string> w = words(line);
    if (w.size() != 8 || w[0] != "backend" || !plain_name(w[1]) || w[2] != "runs" || w[4] != "loaded" ||
        w[6] != "compiled")
      return fail("malformed line '" + line + "'");
    auto runs = number(w[3]), loaded = number(w[5]), compiled = number(w[7]);
    if (!runs || !loaded || !compiled) return fail("malformed number in '" + line + "'");
    if (use.backends.count(w[1])) return fail("backend " + w[1] + " listed twice");
    use.backends[w[1]] = {*runs, *loaded, *compiled};
  }
  return use;
}

std::optional<uint64_t> decode_hits(const std::string& bytes, std::string* why) {
  auto slot = decode_file(Book::Hits, bytes, why);
  if (!slot) return std::nullopt;
  auto hits = parse_hits(slot->payload);
  if (!hits && why) *why = "not a hit count";
  return hits;
}

std::optional<ProgramUse> decode_programs(const std::string& bytes, std::string* why) {
  auto slot = decode_file(Book::Programs, bytes, why);
  if (!slot) return std::nullopt;
  return parse_programs(slot->payload, why);
}

std::string encode_slot(Book book, uint64_t seq, const std::string& payload) {
  std::string body = book_name(book) + std::to_string(seq) + "\n" + payload;
  std::string s = body + "check " + hex16(fnv1a64(body.data(), body.size())) + "\n";
  if (s.size() + 1 > slot_bytes(book)) return "";
  s.append(slot_bytes(book) - s.size() - 1, ' ');
  return s + "\n";
}

// The largest bookkeeping file: two slots of the larger book. A larger one is not ours.
constexpr uint64_t kMaxBookBytes = 2 * 512;

std::optional<std::string> read_book(const std::string& path) {
  int fd = open_regular(path, kMaxBookBytes, nullptr);  // no symlink, no FIFO, nothing huge
  if (fd < 0) return std::nullopt;
  lock(fd, LOCK_SH);  // not had: read anyway; a slot being written fails its checksum
  auto bytes = read_fd(fd, kMaxBookBytes + 1);
  ::close(fd);
  return bytes;
}

namespace {

// Writes `bytes` to a new temporary file beside `path` and puts it in place: link() where `path`
// must not exist (EEXIST: another process made it first), rename() over it otherwise. The file at
// `path` is never partial: a write that fails (a full disk) leaves nothing behind.
int create_whole(const std::string& path, const std::string& bytes, bool replace, int fault,
                 const std::function<void()>& before_link = {}) {
  static std::atomic<uint64_t> counter{0};
  std::string dir = path.substr(0, path.rfind('/') + 1);
  std::string tmp = dir + ".tmp-" + std::to_string(::getpid()) + "-book-" + std::to_string(counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  int err = 0;
  size_t stop = fault ? bytes.size() / 2 : bytes.size();
  for (size_t written = 0; written < stop && !err;) {
    ssize_t w = ::write(fd, bytes.data() + written, stop - written);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) err = w < 0 ? errno : EIO;
    else written += static_cast<size_t>(w);
  }
  if (!err) err = fault;
  if (::close(fd) != 0 && !err) err = errno;
  if (!err && before_link) before_link();
  if (!err && (replace ? ::rename(tmp.c_str(), path.c_str()) : ::link(tmp.c_str(), path.c_str())) != 0) err = errno;
  ::unlink(tmp.c_str());  // after link(), the temporary name; after a failure, the partial file
  return err;
}

}  // namespace

int update_book(const std::string& path, Book book,
                const std::function<std::optional<std::string>(const std::string&)>& update, int fault,
                const std::function<void()>& before_create) {
  size_t n = slot_bytes(book);
  // A few attempts: each retry follows another process's (or file's) change between two steps.
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::string why;
    int fd = open_regular(path, kMaxBookBytes, &why, /*write=*/true);
    if (fd < 0 && errno != ENOENT) {
      // A symlink, FIFO or device named like a bookkeeping file, or an oversized file: not ours to
      // write through. It holds no count, so it is replaced by a fresh file.
      int err = errno;
      if (err != ELOOP && err != EINVAL && err != EFBIG) return err;
      if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno;
      continue;
    }
    if (fd < 0) {
      // Absent: made whole, never as an empty file that a full disk would then leave behind.
      auto next = update("");
      if (!next) return 0;
      std::string slot = encode_slot(book, 1, *next);
      if (slot.empty()) return EFBIG;
      int err = create_whole(path, slot, /*replace=*/false, fault, before_create);
      if (err == EEXIST) continue;  // another process made it: update that one
      return err;
    }
    auto done = [fd](int err) {
      ::close(fd);  // releases the lock
      return err;
    };
    if (int err = lock(fd, LOCK_EX)) return done(err);
    auto bytes = read_fd(fd, 2 * n + 1);
    if (!bytes) return done(errno);
    auto current = decode_file(book, *bytes, nullptr);
    auto next = update(current ? current->payload : "");
    if (!next) return done(0);
    std::string slot = encode_slot(book, current ? current->seq + 1 : 1, *next);
    if (slot.empty()) return done(EFBIG);
    // No intact slot (an empty or garbled file): replaced whole, under the lock, so that a failed
    // write leaves the old file rather than an empty one.
    if (!current) return done(create_whole(path, slot, /*replace=*/true, fault));
    size_t at = (1 - current->index) * n;
    size_t stop = fault ? slot.size() / 2 : slot.size();
    for (size_t written = 0; written < stop;) {
      ssize_t w = ::pwrite(fd, slot.data() + written, stop - written, static_cast<off_t>(at + written));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return done(errno);
      if (w == 0) return done(EIO);
      written += static_cast<size_t>(w);
    }
    return done(fault);
  }
  return EAGAIN;
}

}  // namespace lf::cache::disk
