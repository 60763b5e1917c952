// The on-disk format of one persistent kernel cache entry, and where entries live. Plain C++ (no
// abseil, LLVM or CUDA) so that the lazyfuse-cache tool reads entries with the same code.
//
// Layout: "LFKCACHE" magic, u32 format version, then the fields below in order, each a u64 byte
// count and the bytes, then the FNV-1a 64 checksum of everything before it. Integers are
// little-endian.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace lf::cache::disk {

// 2: the `quick` field. 3: the `why` field, and `name` is "lf_" + key_hash(key). Version 2 entries
// are still read (the tool lists and shows them); the library never loads one (its kernel has an
// older name) and replaces it.
inline constexpr uint32_t kFormatVersion = 3;
inline constexpr uint32_t kOldestReadVersion = 2;
inline constexpr const char* kEntrySuffix = ".lfk";

struct Record {
  std::string key;      // the executor's full key; a file whose key differs is never used
  std::string backend;  // "cpu" or "cuda"
  std::string target;   // CPU features / GPU architecture, with compiler and driver versions
  std::string name;     // the kernel's symbol
  std::string summary;  // the fused ops in words, e.g. "mul,add -> sum[inner 1d]"
  std::string io;       // operand dtypes and layout classes, e.g. "float32:contig -> float32:contig"
  std::string source;   // LLVM IR or CUDA C, as generated
  std::string log;      // compiler messages
  double compile_ms = 0;
  int64_t created = 0;  // seconds since the epoch
  std::string binary;   // CPU: an object file; CUDA: a cubin
  bool quick = false;   // a quick build (tiered compiling): a run that loads it compiles the optimized one
  std::string why;      // why it was compiled (backend/explain.h); empty for the first of its ops
  uint32_t version = kFormatVersion;  // as read (decode); encode always writes kFormatVersion
};

uint64_t fnv1a64(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull);

std::string encode(const Record& r);

// Parses and checks an entry (versions kOldestReadVersion to kFormatVersion). On failure returns
// nullopt and says why in *why (bad magic, another format version, truncated, checksum mismatch).
std::optional<Record> decode(const std::string& bytes, std::string* why);

// The 16-hex-digit hash of a key; entry files are named <hash>.lfk.
std::string key_hash(const std::string& key);
std::string file_name(const std::string& key);

// The largest file the cache reads: far above any kernel's object file or cubin with its source.
// A larger "entry" is not ours, and is not read (a symlink to /dev/zero must not fill memory).
inline constexpr uint64_t kMaxEntryBytes = uint64_t{256} << 20;

// Opens `path` for reading the way every cache file is opened: without following a symbolic link
// and without blocking (a FIFO must not hang the reader), and only when it is a regular file of at
// most `max_bytes`. Returns the descriptor, or -1 with errno set and *why saying what it is ("a
// symbolic link", "not a regular file (a FIFO)", "larger than ..."). `write`: O_RDWR.
int open_regular(const std::string& path, uint64_t max_bytes, std::string* why, bool write = false);

// Reads a whole file opened as open_regular does, at most `max_bytes` (a file that grows past
// them while it is read is refused too); nullopt if it cannot be opened or read, and *why says why.
std::optional<std::string> read_file(const std::string& path, std::string* why = nullptr,
                                     uint64_t max_bytes = kMaxEntryBytes);

}  // namespace lf::cache::disk
