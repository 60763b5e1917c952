// The persistent cache's bookkeeping, kept beside the entries: how often each entry was loaded
// (<hash>.hits) and what the programs that used the cache recorded (programs.txt: per backend,
// runs, kernels loaded from disk, kernels compiled). Plain C++ and POSIX, shared with the
// lazyfuse-cache tool.
//
// Every load updates these files, so they are updated in place (a rename costs ~0.3 ms on ext4,
// an in-place write ~3 us) under an flock() of the file, and made so that no failure can garble
// them: each file holds two fixed-size slots, each with a sequence number and a checksum; an
// update reads the newer intact slot and writes the next value into the other one. A write cut
// short (a full disk, a crash) spoils only the slot being written: the previous value stays, and
// one count is lost. A file with no intact slot counts as empty and is started again.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace lf::cache::disk {

inline constexpr const char* kHitsSuffix = ".hits";
inline constexpr const char* kProgramsFile = "programs.txt";

enum class Book { Hits, Programs };

// "<hash>.hits", beside the entry "<hash>.lfk".
std::string hits_name(const std::string& hash);

// One backend's record, summed over every program that used the cache.
struct BackendUse {
  uint64_t runs = 0;      // processes that needed a kernel of this backend that was not in memory
  uint64_t loaded = 0;    // kernels those processes loaded from the disk cache
  uint64_t compiled = 0;  // kernels they compiled (not on disk, or unusable there)
};

struct ProgramUse {
  int64_t since = 0;                           // first record, seconds since the epoch
  std::map<std::string, BackendUse> backends;  // "cpu", "cuda"
};

// The value held by a whole bookkeeping file's bytes; nullopt, and why, when no slot is intact.
std::optional<uint64_t> decode_hits(const std::string& bytes, std::string* why = nullptr);
std::optional<ProgramUse> decode_programs(const std::string& bytes, std::string* why = nullptr);

// The bytes of a slot holding `value`, and the payloads they are made of (for tests and the writer).
std::string encode_slot(Book book, uint64_t seq, const std::string& payload);
std::string hits_payload(uint64_t hits);
std::string programs_payload(const ProgramUse& use);

// The file's bytes, read under a shared lock (or without one, when the lock is not had within a
// second); nullopt when it is absent or unreadable.
std::optional<std::string> read_book(const std::string& path);

// Under an exclusive lock on `path` (created when absent): `update` gets the current value's
// payload ("" when the file is new or has no intact slot) and returns the next payload, or nullopt
// to write nothing. `update` may be called more than once (another process made or changed the
// file between two steps: the next attempt reads it again); only its last result is written, so it
// must decide from its argument, not from what an earlier call did. Returns 0 or the errno of the
// failed step; ETIMEDOUT when another process kept the lock for more than a second.
// Tests: `fault` makes the write stop halfway and fail with it; `before_create` runs between a new
// file's temporary copy and its link into place (where another process may make it first).
int update_book(const std::string& path, Book book,
                const std::function<std::optional<std::string>(const std::string&)>& update, int fault = 0,
                const std::function<void()>& before_create = {});

// Payload parsers for `update` callbacks (nullopt: not a payload of that book).
std::optional<uint64_t> parse_hits(const std::string& payload);
std::optional<ProgramUse> parse_programs(const std::string& payload, std::string* why);

}  // namespace lf::cache::disk
