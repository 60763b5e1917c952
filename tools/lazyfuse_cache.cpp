// lazyfuse-cache: lists, shows, verifies and trims the persistent kernel cache (README, "The
// persistent kernel cache"). Reads entries with the library's own format code.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/cache/disk_entry.h"
#include "codegen/cache/disk_usage.h"
#include "tools/lazyfuse_cache_help.h"
#include "runtime/config.h"

namespace {
namespace fs = std::filesystem;
namespace disk = lf::cache::disk;
using lf::cache_tool::kHelp;
using lf::cache_tool::kUsage;

struct Error {
  std::string message;
};

struct Item {
  fs::path path;
  std::string hash;
  uint64_t size = 0;
  int64_t used = 0;  // mtime, seconds since the epoch
  uint64_t hits = 0;  // from <hash>.hits; 0 when absent or unreadable
  std::optional<disk::Record> record;
  std::string why;   // when record is empty
};

// An entry's hit count; 0 when it has none (never loaded) or none that can be read.
uint64_t entry_hits(const std::string& dir, const std::string& hash) {
  auto bytes = disk::read_book((fs::path(dir) / disk::hits_name(hash)).string());
  return bytes ? disk::decode_hits(*bytes).value_or(0) : 0;
}

std::vector<Item> scan(const std::string& dir, bool with_records = true) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error{"no cache directory at " + dir + " (nothing cached yet, or a wrong --dir)"};
  std::vector<Item> items;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!name.ends_with(disk::kEntrySuffix) || name[0] == '.') continue;
    Item item;
    item.path = it->path();
    item.hash = name.substr(0, name.size() - std::strlen(disk::kEntrySuffix));
    // lstat: a symlink (dangling or not) is a bad entry, never followed; a FIFO or device is
    // never opened (the library opens entries the same way: disk::open_regular).
    struct stat st {};
    if (::lstat(item.path.c_str(), &st) != 0) continue;  // removed meanwhile
    item.size = static_cast<uint64_t>(st.st_size);
    item.used = static_cast<int64_t>(st.st_mtime);
    item.hits = entry_hits(dir, item.hash);
    if (S_ISLNK(st.st_mode)) {
      std::error_code e2;
      item.why = "a symbolic link (to " + fs::read_symlink(item.path, e2).string() + "); entries are regular files";
    } else if (!S_ISREG(st.st_mode)) {
      item.why = "not a regular file";
    } else if (with_records) {
      std::string why;
      auto bytes = disk::read_file(item.path.string(), &why);
      if (!bytes) {
        item.why = "unreadable: " + why;
      } else if ((item.record = disk::decode(*bytes, &item.why))) {
        if (item.hash != disk::key_hash(item.record->key)) {
          item.why = "file name does not match the hash of the key inside";
          item.record.reset();
        }
      }
    }
    items.push_back(std::move(item));
  }
  if (ec) throw Error{"cannot read " + dir + ": " + ec.message()};
  return items;
}

std::string when(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

std::string human(uint64_t bytes) {
  char buf[32];
  if (bytes < 10 * 1024) std::snprintf(buf, sizeof buf, "%lluB", static_cast<unsigned long long>(bytes));
  else if (bytes < 10ull * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1fK", bytes / 1024.0);
  else std::snprintf(buf, sizeof buf, "%.1fM", bytes / 1048576.0);
  return buf;
}

std::string json(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// Why an entry exists, in words: its recorded explanation, or what its absence means.
std::string why_text(const disk::Record& r) {
  if (r.version < 3) return "(not recorded: a format version " + std::to_string(r.version) + " entry)";
  return r.why.empty() ? "the first kernel of its ops in the run that compiled it" : "new: " + r.why;
}

// CPU targets read "llvm19.1.7/x86_64/intel-6-207-2/cpuid-<hash>/+avx,...": the CPU's vendor,
// family, model and stepping is what tells entries apart. CUDA targets read "sm_90/nvrtc12.8/driver12080": the architecture.
std::string short_target(const disk::Record& r) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (at <= r.target.size()) {
    size_t slash = r.target.find('/', at);
    if (slash == std::string::npos) slash = r.target.size();
    parts.push_back(r.target.substr(at, slash - at));
    at = slash + 1;
  }
  if (r.backend == "cpu" && parts.size() >= 3) return parts[2];
  return parts.empty() ? r.target : parts[0];
}

// Options of one command: flags it knows; anything else is an error.
struct Args {
  bool json = false;
  bool yes = false;  // prune --yes: --max-mb 0 may remove every entry
  std::string sort = "use";
  std::optional<double> max_mb, older_days;
  std::vector<std::string> positional;
};

// A number in [0, max]: nan, inf and anything past `max` are refused, so that what is computed
// from it (days to seconds, MiB to bytes) cannot overflow (--older-than 1e20 once meant "every
// entry").
double number(const std::string& flag, const std::string& v, double max) {
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(d >= 0)) throw Error{flag + ": expected a non-negative number, got '" + v + "'"};
  if (errno == ERANGE || !(d <= max)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", max);
    throw Error{flag + ": " + v + " is out of range (at most " + buf + ")"};
  }
  return d;
}

// The ranges: 10^7 days is 27,000 years (3.2e14 s); 2^40 MiB is 2^60 bytes.
constexpr double kMaxDays = 1e7;
constexpr double kMaxMiB = 0x1p40;

Args parse(const std::string& cmd, const std::vector<std::string>& argv) {
  Args a;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& s = argv[i];
    auto value = [&](const std::string& flag) -> std::string {
      if (s.size() > flag.size() && s[flag.size()] == '=') return s.substr(flag.size() + 1);
      if (i + 1 >= argv.size()) throw Error{flag + " needs a value"};
      return argv[++i];
    };
    bool takes_json = cmd == "list" || cmd == "show" || cmd == "stats";
    if (s == "--json" && takes_json) {
      a.json = true;
    } else if (s.rfind("--sort", 0) == 0 && cmd == "list") {
      a.sort = value("--sort");
      if (a.sort != "use" && a.sort != "hits" && a.sort != "size" && a.sort != "time" && a.sort != "name")
        throw Error{"--sort: expected use, hits, size, time or name, got '" + a.sort + "'"};
    } else if (s.rfind("--max-mb", 0) == 0 && cmd == "prune") {
      a.max_mb = number("--max-mb", value("--max-mb"), kMaxMiB);
    } else if (s == "--yes" && cmd == "prune") {
      a.yes = true;
    } else if (s.rfind("--older-than", 0) == 0 && cmd == "prune") {
      a.older_days = number("--older-than", value("--older-than"), kMaxDays);
    } else if (!s.empty() && s[0] == '-') {
      throw Error{"'" + cmd + "' does not take " + s + " (see lazyfuse-cache " + cmd + " --help)"};
    } else {
      a.positional.push_back(s);
    }
  }
  size_t want = cmd == "show" ? 1 : 0;
  if (a.positional.size() != want)
    throw Error{cmd == "show" ? "show needs exactly one HASH or KERNEL name" : "'" + cmd + "' takes no arguments, got '" + a.positional[0] + "'"};
  if (cmd == "prune" && !a.max_mb && !a.older_days) throw Error{"prune needs --max-mb N and/or --older-than DAYS"};
  // A size of 0 is "remove everything": a typo or an unset variable must not empty the cache.
  if (cmd == "prune" && a.max_mb && *a.max_mb == 0 && !a.yes)
    throw Error{"--max-mb 0 removes every entry; add --yes to confirm (or use 'lazyfuse-cache clear')"};
  return a;
}

int cmd_list(const std::string& dir, const Args& a) {
  auto items = scan(dir);
  std::sort(items.begin(), items.end(), [&](const Item& x, const Item& y) {
    if (a.sort == "size") return x.size > y.size;
    if (a.sort == "time") {
      double tx = x.record ? x.record->compile_ms : -1, ty = y.record ? y.record->compile_ms : -1;
      return tx > ty;
    }
    if (a.sort == "name") return x.hash < y.hash;
    if (a.sort == "hits" && x.hits != y.hits) return x.hits > y.hits;
    return x.used > y.used;
  });
  if (a.json) {
    std::printf("[");
    for (size_t i = 0; i < items.size(); ++i) {
      const Item& it = items[i];
      std::printf("%s\n  {\"hash\": %s, \"ok\": %s, \"size\": %llu, \"hits\": %llu, \"last_use\": %lld", i ? "," : "",
                  json(it.hash).c_str(), it.record ? "true" : "false", static_cast<unsigned long long>(it.size),
                  static_cast<unsigned long long>(it.hits), static_cast<long long>(it.used));
      if (it.record) {
        const disk::Record& r = *it.record;
        std::printf(", \"backend\": %s, \"target\": %s, \"name\": %s, \"summary\": %s, \"io\": %s, "
                    "\"compile_ms\": %.3f, \"created\": %lld, \"quick\": %s, \"why\": %s",
                    json(r.backend).c_str(), json(r.target).c_str(), json(r.name).c_str(), json(r.summary).c_str(),
                    json(r.io).c_str(), r.compile_ms, static_cast<long long>(r.created), r.quick ? "true" : "false",
                    json(why_text(r)).c_str());
      } else {
        std::printf(", \"error\": %s", json(it.why).c_str());
      }
      std::printf("}");
    }
    std::printf("%s]\n", items.empty() ? "" : "\n");
    return 0;
  }
  for (const Item& it : items) {
    if (!it.record) {
      std::printf("%-19s  BAD  %s  %s  (%s)\n", ("lf_" + it.hash).c_str(), human(it.size).c_str(),
                  when(it.used).c_str(), it.why.c_str());
      continue;
    }
    const disk::Record& r = *it.record;
    std::string target = short_target(r);
    std::printf("%-19s  %-4s %-10s  %-36s  %-44s  %8.1f ms  %7s  %5llu hits  %s  %s\n", ("lf_" + it.hash).c_str(),
                r.backend.c_str(), target.c_str(), r.summary.c_str(), r.io.c_str(), r.compile_ms,
                human(it.size).c_str(), static_cast<unsigned long long>(it.hits), when(it.used).c_str(),
                why_text(r).c_str());
  }
  if (items.empty()) std::printf("(no entries in %s)\n", dir.c_str());
  return 0;
}

// A GPU library kernel's key ends with its whole source (codegen/cuda/library_cache.cpp), which
// `show` prints below anyway: the text form names it instead.
std::string shown_key(const disk::Record& r) {
  const size_t at = r.summary.rfind("library ", 0) == 0 ? r.key.find("|library|") : std::string::npos;
  return at == std::string::npos ? r.key : r.key.substr(0, at + 9) + "<the source below>";
}

int cmd_show(const std::string& dir, const Args& a) {
  // A kernel's name is "lf_" + its entry's hash (codegen/backend/kernel.h).
  // An empty prefix ("lf_" alone) is a prefix of every hash: ambiguous unless one entry is cached.
  const std::string& given = a.positional[0];
  std::string prefix = given;
  if (prefix.rfind("lf_", 0) == 0) prefix = prefix.substr(3);
  auto items = scan(dir, false);
  std::vector<Item> match;
  for (Item& it : items)
    if (it.hash.rfind(prefix, 0) == 0) match.push_back(it);
  if (match.empty()) throw Error{"no entry " + (prefix.empty() ? "at all" : prefix) + " in " + dir};
  if (match.size() > 1)
    throw Error{"'" + given + "' is ambiguous: matches " + std::to_string(match.size()) +
                " entries; give more digits of the hash ('lazyfuse-cache list' shows them)"};
  Item it = match[0];
  std::string read_why;
  auto bytes = disk::read_file(it.path.string(), &read_why);
  if (!bytes) throw Error{"cannot read " + it.path.string() + ": " + read_why};
  std::string why;
  auto r = disk::decode(*bytes, &why);
  if (!r) throw Error{"entry " + it.hash + " is bad: " + why};
  if (a.json) {
    std::printf(
        "{\"hash\": %s, \"key\": %s, \"backend\": %s, \"target\": %s, \"name\": %s, \"summary\": %s, "
        "\"io\": %s, \"compile_ms\": %.3f, \"quick\": %s, \"created\": %lld, \"hits\": %llu, \"last_use\": %lld, "
        "\"size\": %llu, \"binary_bytes\": %zu, \"why\": %s, \"version\": %u, \"log\": %s, \"source\": %s}\n",
        json(it.hash).c_str(), json(r->key).c_str(), json(r->backend).c_str(), json(r->target).c_str(),
        json(r->name).c_str(), json(r->summary).c_str(), json(r->io).c_str(), r->compile_ms, r->quick ? "true" : "false",
        static_cast<long long>(r->created), static_cast<unsigned long long>(it.hits), static_cast<long long>(it.used),
        static_cast<unsigned long long>(it.size), r->binary.size(), json(why_text(*r)).c_str(), r->version,
        json(r->log).c_str(), json(r->source).c_str());
    return 0;
  }
  std::printf(
      "hash:     %s\nfile:     %s\nkernel:   %s\nwhy:      %s\nbackend:  %s\ntarget:   %s\nops:      %s\noperands: %s\n"
      "compiled: %.1f ms, %s%s\nhits:     %llu (loads from disk by programs)\nlast use: %s\n"
      "size:     %s (binary %zu bytes)\nkey:      %s\n",
      it.hash.c_str(), it.path.c_str(), r->name.c_str(), why_text(*r).c_str(), r->backend.c_str(), r->target.c_str(),
      r->summary.c_str(),
      r->io.c_str(), r->compile_ms, when(r->created).c_str(),
      r->quick ? " (a quick build: the next run that loads it compiles the optimized one)" : "", static_cast<unsigned long long>(it.hits),
      when(it.used).c_str(), human(it.size).c_str(), r->binary.size(), shown_key(*r).c_str());
  std::printf("\n--- compile log ---\n%s\n", r->log.empty() ? "(empty)" : r->log.c_str());
  std::printf("\n--- source (%s) ---\n%s\n", r->backend == "cuda" ? "CUDA C" : "LLVM IR", r->source.c_str());
  return 0;
}

// The programs record (codegen/cache/disk_usage.h): nullopt with *why empty when no program has written
// one yet, nullopt with the reason when it does not parse.
std::optional<disk::ProgramUse> read_programs(const std::string& dir, std::string* why) {
  why->clear();
  auto bytes = disk::read_book((fs::path(dir) / disk::kProgramsFile).string());
  if (!bytes) return std::nullopt;
  auto use = disk::decode_programs(*bytes, why);
  if (!use && why->empty()) *why = "malformed";
  return use;
}

// "50.0%", or "-" before anything was counted; JSON: 0.5 or null.
std::string rate(uint64_t loaded, uint64_t compiled, bool as_json) {
  if (loaded + compiled == 0) return as_json ? "null" : "-";
  char buf[32];
  double r = static_cast<double>(loaded) / static_cast<double>(loaded + compiled);
  if (as_json)
    std::snprintf(buf, sizeof buf, "%.4f", r);
  else
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * r);
  return buf;
}

int cmd_stats(const std::string& dir, const Args& a) {
  auto items = scan(dir);
  struct Totals {
    uint64_t entries = 0, bytes = 0, hits = 0;
    double compile_ms = 0;
  };
  std::map<std::string, Totals> per;
  uint64_t bad = 0, bad_bytes = 0, total = 0, hits = 0;
  for (const Item& it : items) {
    total += it.size;
    hits += it.hits;
    if (!it.record) {
      ++bad;
      bad_bytes += it.size;
      continue;
    }
    Totals& t = per[it.record->backend + " " + short_target(*it.record)];
    ++t.entries;
    t.bytes += it.size;
    t.hits += it.hits;
    t.compile_ms += it.record->compile_ms;
  }
  std::string programs_why;
  auto programs = read_programs(dir, &programs_why);
  uint64_t loaded = 0, compiled = 0;
  if (programs) {
    for (const auto& [backend, b] : programs->backends) {
      loaded += b.loaded;
      compiled += b.compiled;
    }
  }
  if (a.json) {
    std::printf("{\"dir\": %s, \"entries\": %zu, \"bytes\": %llu, \"bad\": %llu, \"hits\": %llu, \"targets\": [",
                json(dir).c_str(), items.size(), static_cast<unsigned long long>(total),
                static_cast<unsigned long long>(bad), static_cast<unsigned long long>(hits));
    bool first = true;
    for (const auto& [name, t] : per) {
      std::printf("%s{\"target\": %s, \"entries\": %llu, \"bytes\": %llu, \"hits\": %llu, \"compile_ms\": %.3f}",
                  first ? "" : ", ", json(name).c_str(), static_cast<unsigned long long>(t.entries),
                  static_cast<unsigned long long>(t.bytes), static_cast<unsigned long long>(t.hits), t.compile_ms);
      first = false;
    }
    std::printf("], \"programs\": ");
    if (!programs) {
      std::printf("null");
    } else {
      std::printf("{\"since\": %lld, \"loaded\": %llu, \"compiled\": %llu, \"hit_rate\": %s, \"backends\": [",
                  static_cast<long long>(programs->since), static_cast<unsigned long long>(loaded),
                  static_cast<unsigned long long>(compiled), rate(loaded, compiled, true).c_str());
      first = true;
      for (const auto& [backend, b] : programs->backends) {
        std::printf("%s{\"backend\": %s, \"runs\": %llu, \"loaded\": %llu, \"compiled\": %llu, \"hit_rate\": %s}",
                    first ? "" : ", ", json(backend).c_str(), static_cast<unsigned long long>(b.runs),
                    static_cast<unsigned long long>(b.loaded), static_cast<unsigned long long>(b.compiled),
                    rate(b.loaded, b.compiled, true).c_str());
        first = false;
      }
      std::printf("]}");
    }
    if (!programs_why.empty()) std::printf(", \"programs_error\": %s", json(programs_why).c_str());
    std::printf("}\n");
    return 0;
  }
  std::printf("cache: %s\nentries: %zu, %s on disk, %llu hits (loads by programs)\n", dir.c_str(), items.size(),
              human(total).c_str(), static_cast<unsigned long long>(hits));
  // Per backend and target (the CPU name or GPU architecture; 'list --json' has the full target).
  for (const auto& [name, t] : per)
    std::printf("  %s: %llu entries, %s, %llu hits, %.1f ms of compiling saved per run that uses them all\n",
                name.c_str(), static_cast<unsigned long long>(t.entries), human(t.bytes).c_str(),
                static_cast<unsigned long long>(t.hits), t.compile_ms);
  if (bad) std::printf("  bad entries: %llu (%s); 'lazyfuse-cache verify' lists them\n",
                       static_cast<unsigned long long>(bad), human(bad_bytes).c_str());
  if (!programs_why.empty()) {
    std::printf("programs: the record %s is unreadable (%s); the next program to use the cache starts it again\n",
                disk::kProgramsFile, programs_why.c_str());
  } else if (!programs) {
    std::printf("programs: none has recorded its use of this cache yet\n");
  } else {
    // What each process counted when a kernel was not in its memory: loaded from here, or compiled.
    std::printf("programs since %s (kernels each run loaded from this cache or compiled):\n",
                when(programs->since).c_str());
    for (const auto& [backend, b] : programs->backends)
      std::printf("  %s: %llu runs, %llu loaded, %llu compiled: hit rate %s\n", backend.c_str(),
                  static_cast<unsigned long long>(b.runs), static_cast<unsigned long long>(b.loaded),
                  static_cast<unsigned long long>(b.compiled), rate(b.loaded, b.compiled, false).c_str());
    if (programs->backends.size() > 1)
      std::printf("  all: %llu loaded, %llu compiled: hit rate %s\n", static_cast<unsigned long long>(loaded),
                  static_cast<unsigned long long>(compiled), rate(loaded, compiled, false).c_str());
  }
  return 0;
}

// Hit counts of `dir`: hash -> path, whether or not their entry is there.
std::map<std::string, fs::path> hit_files(const std::string& dir) {
  std::map<std::string, fs::path> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.ends_with(disk::kHitsSuffix) && name[0] != '.') out[it->path().stem().string()] = it->path();
  }
  if (ec) throw Error{"cannot read " + dir + ": " + ec.message()};
  return out;
}

int cmd_verify(const std::string& dir) {
  auto items = scan(dir);
  size_t bad = 0;
  for (const Item& it : items) {
    if (it.record) continue;
    ++bad;
    std::printf("BAD %s: %s\n", it.path.c_str(), it.why.c_str());
  }
  // The bookkeeping is rewritten by the next program when bad; still, a bad file is news.
  size_t bad_other = 0;
  for (const auto& [hash, path] : hit_files(dir)) {
    auto bytes = disk::read_book(path.string());
    std::string why = "unreadable";
    if (bytes && disk::decode_hits(*bytes, &why)) continue;
    ++bad_other;
    std::printf("BAD %s: %s\n", path.c_str(), why.c_str());
  }
  std::string why;
  if (!read_programs(dir, &why) && !why.empty()) {
    ++bad_other;
    std::printf("BAD %s: %s\n", (fs::path(dir) / disk::kProgramsFile).c_str(), why.c_str());
  }
  std::printf("%zu entries, %zu bad", items.size(), bad);
  if (bad_other) std::printf("; %zu bad bookkeeping files", bad_other);
  std::printf("\n");
  return bad + bad_other ? 1 : 0;
}

void remove_or_throw(const fs::path& p) {
  std::error_code ec;
  fs::remove(p, ec);
  if (ec) throw Error{"cannot remove " + p.string() + ": " + ec.message()};
}

// An entry goes with its hit count.
void remove_entry(const Item& it) {
  remove_or_throw(it.path);
  remove_or_throw(fs::path(it.path).replace_extension(disk::kHitsSuffix));
}

int cmd_prune(const std::string& dir, const Args& a) {
  auto items = scan(dir);
  size_t removed = 0;
  uint64_t freed = 0;
  std::vector<Item> kept;
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  for (Item& it : items) {
    // In double: an mtime far in the future or past must not overflow the difference either.
    bool old = a.older_days && static_cast<double>(now) - static_cast<double>(it.used) > *a.older_days * 86400;
    if (!it.record || old) {
      remove_entry(it);
      ++removed;
      freed += it.size;
    } else {
      kept.push_back(std::move(it));
    }
  }
  if (a.max_mb) {
    auto limit = static_cast<uint64_t>(*a.max_mb * 1048576);
    uint64_t total = 0;
    for (const Item& it : kept) total += it.size;
    std::sort(kept.begin(), kept.end(), [](const Item& x, const Item& y) { return x.used < y.used; });
    size_t gone = 0;
    for (const Item& it : kept) {
      if (total <= limit) break;
      remove_entry(it);
      total -= it.size;
      ++removed;
      ++gone;
      freed += it.size;
    }
    kept.erase(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(gone));
  }
  // Hit counts whose entry is gone (removed by hand, or by a process that died halfway).
  std::map<std::string, bool> live;
  for (const Item& it : kept) live[it.hash] = true;
  for (const auto& [hash, path] : hit_files(dir))
    if (!live.count(hash)) remove_or_throw(path);
  std::printf("removed %zu entries (%s)\n", removed, human(freed).c_str());
  return 0;
}

// Everything but the lock file, which a running program may hold (it holds no data).
int cmd_clear(const std::string& dir) {
  auto items = scan(dir, false);
  for (const Item& it : items) remove_entry(it);
  for (const auto& [hash, path] : hit_files(dir)) remove_or_throw(path);
  remove_or_throw(fs::path(dir) / disk::kProgramsFile);
  std::error_code ec;
  std::vector<fs::path> temps;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->path().filename().string().rfind(".tmp-", 0) == 0) temps.push_back(it->path());
  for (const fs::path& t : temps) fs::remove(t, ec);  // a writer may be renaming it away meanwhile
  std::printf("removed %zu entries from %s\n", items.size(), dir.c_str());
  return 0;
}

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::optional<std::string> dir;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& s = args[i];
    if (s == "--help" || s == "-h" || s == "help") {
      if (s == "help" && i + 1 < args.size() && kHelp.count(args[i + 1])) {
        std::fputs(kHelp.at(args[i + 1]).c_str(), stdout);
      } else {
        std::fputs(kUsage, stdout);
      }
      return 0;
    }
    if (s == "--dir" || s.rfind("--dir=", 0) == 0) {
      if (s == "--dir") {
        if (i + 1 >= args.size()) throw Error{"--dir needs a directory"};
        dir = args[++i];
      } else {
        dir = s.substr(6);
      }
      if (dir->empty()) throw Error{"--dir needs a directory"};
      continue;
    }
    break;
  }
  if (i >= args.size()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string cmd = args[i];
  if (!kHelp.count(cmd)) throw Error{"unknown command '" + cmd + "' (try --help)"};
  std::vector<std::string> rest(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
  if (std::find(rest.begin(), rest.end(), "--help") != rest.end() ||
      std::find(rest.begin(), rest.end(), "-h") != rest.end()) {
    std::fputs(kHelp.at(cmd).c_str(), stdout);
    return 0;
  }
  Args a = parse(cmd, rest);
  if (!dir) {
    dir = lf::rt::config().cache_dir;
    if (dir->empty())
      throw Error{"the persistent cache is off (LAZYFUSE_CACHE_DIR=off, or no home directory); use --dir DIR"};
  }
  if (cmd == "list") return cmd_list(*dir, a);
  if (cmd == "show") return cmd_show(*dir, a);
  if (cmd == "stats") return cmd_stats(*dir, a);
  if (cmd == "verify") return cmd_verify(*dir);
  if (cmd == "prune") return cmd_prune(*dir, a);
  return cmd_clear(*dir);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "lazyfuse-cache: %s\n", e.message.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lazyfuse-cache: %s\n", e.what());
    return 2;
  }
}
