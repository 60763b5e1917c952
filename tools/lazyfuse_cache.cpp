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

#include "codegen/disk_entry.h"
#include "runtime/config.h"

namespace {
namespace fs = std::filesystem;
namespace disk = lf::cache::disk;

constexpr const char* kUsage =
    "usage: lazyfuse-cache [--dir DIR] COMMAND [OPTIONS]\n"
    "\n"
    "Inspects LazyFuse's persistent kernel cache (default: LAZYFUSE_CACHE_DIR, else\n"
    "$XDG_CACHE_HOME/lazyfuse, else ~/.cache/lazyfuse).\n"
    "\n"
    "commands:\n"
    "  list [--sort=use|size|time|name] [--json]   one line per entry\n"
    "  show HASH [--json]                          the whole entry: key, source, compile log\n"
    "  stats [--json]                              totals per backend, disk use\n"
    "  verify                                      checks every entry; exit 1 if any is bad\n"
    "  prune [--max-mb N] [--older-than DAYS]      removes least recently used / old entries\n"
    "  clear                                       removes every entry\n"
    "\n"
    "'lazyfuse-cache COMMAND --help' describes one command.\n";

const std::map<std::string, std::string> kHelp = {
    {"list",
     "usage: lazyfuse-cache list [--sort=use|size|time|name] [--json]\n"
     "One line per entry: short hash, backend and target, fused ops, operand dtypes and layout classes,\n"
     "compile ms, size, last use. --sort: use (most recent first, the default), size (largest first),\n"
     "time (slowest compile first), name (hash). Bad entries are listed as BAD.\n"},
    {"show",
     "usage: lazyfuse-cache show HASH [--json]\n"
     "Prints one entry: key, backend, target, summary, compile log and generated source.\n"
     "HASH may be any unique prefix of the hash 'list' prints.\n"},
    {"stats", "usage: lazyfuse-cache stats [--json]\nEntries, bytes and compile time saved per backend; disk use.\n"},
    {"verify", "usage: lazyfuse-cache verify\nChecks every entry's checksum and format; lists bad ones; exit 1 if any.\n"},
    {"prune",
     "usage: lazyfuse-cache prune [--max-mb N] [--older-than DAYS]\n"
     "--max-mb N: removes least recently used entries until the cache holds at most N MiB.\n"
     "--older-than DAYS: removes entries not used for DAYS days. Bad entries are removed too.\n"},
    {"clear", "usage: lazyfuse-cache clear\nRemoves every entry (and leftover temporary files).\n"},
};

struct Error {
  std::string message;
};

struct Item {
  fs::path path;
  std::string hash;
  uint64_t size = 0;
  int64_t used = 0;  // mtime, seconds since the epoch
  std::optional<disk::Record> record;
  std::string why;   // when record is empty
};

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
    struct stat st {};
    if (::stat(item.path.c_str(), &st) != 0) continue;  // removed meanwhile
    item.size = static_cast<uint64_t>(st.st_size);
    item.used = static_cast<int64_t>(st.st_mtime);
    if (with_records) {
      auto bytes = disk::read_file(item.path.string());
      if (!bytes) {
        item.why = std::string("unreadable: ") + std::strerror(errno);
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

std::string short_hash(const std::string& h) { return h.substr(0, 10); }

// CPU targets read "llvm19.1.7/x86_64-pc-linux-gnu/znver3/+avx,...": the CPU name is what tells
// entries apart. CUDA targets read "sm_90/nvrtc12.8/driver12080": the architecture.
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
  std::string sort = "use";
  std::optional<double> max_mb, older_days;
  std::vector<std::string> positional;
};

double number(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(d >= 0)) throw Error{flag + ": expected a non-negative number, got '" + v + "'"};
  return d;
}

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
      if (a.sort != "use" && a.sort != "size" && a.sort != "time" && a.sort != "name")
        throw Error{"--sort: expected use, size, time or name, got '" + a.sort + "'"};
    } else if (s.rfind("--max-mb", 0) == 0 && cmd == "prune") {
      a.max_mb = number("--max-mb", value("--max-mb"));
    } else if (s.rfind("--older-than", 0) == 0 && cmd == "prune") {
      a.older_days = number("--older-than", value("--older-than"));
    } else if (!s.empty() && s[0] == '-') {
      throw Error{"'" + cmd + "' does not take " + s + " (see lazyfuse-cache " + cmd + " --help)"};
    } else {
      a.positional.push_back(s);
    }
  }
  size_t want = cmd == "show" ? 1 : 0;
  if (a.positional.size() != want)
    throw Error{cmd == "show" ? "show needs exactly one HASH" : "'" + cmd + "' takes no arguments, got '" + a.positional[0] + "'"};
  if (cmd == "prune" && !a.max_mb && !a.older_days) throw Error{"prune needs --max-mb N and/or --older-than DAYS"};
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
    return x.used > y.used;
  });
  if (a.json) {
    std::printf("[");
    for (size_t i = 0; i < items.size(); ++i) {
      const Item& it = items[i];
      std::printf("%s\n  {\"hash\": %s, \"ok\": %s, \"size\": %llu, \"last_use\": %lld", i ? "," : "",
                  json(it.hash).c_str(), it.record ? "true" : "false", static_cast<unsigned long long>(it.size),
                  static_cast<long long>(it.used));
      if (it.record) {
        const disk::Record& r = *it.record;
        std::printf(", \"backend\": %s, \"target\": %s, \"name\": %s, \"summary\": %s, \"io\": %s, "
                    "\"compile_ms\": %.3f, \"created\": %lld",
                    json(r.backend).c_str(), json(r.target).c_str(), json(r.name).c_str(), json(r.summary).c_str(),
                    json(r.io).c_str(), r.compile_ms, static_cast<long long>(r.created));
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
      std::printf("%-10s  BAD  %s  %s  (%s)\n", short_hash(it.hash).c_str(), human(it.size).c_str(),
                  when(it.used).c_str(), it.why.c_str());
      continue;
    }
    const disk::Record& r = *it.record;
    std::string target = short_target(r);
    std::printf("%-10s  %-4s %-10s  %-36s  %-44s  %8.1f ms  %7s  %s\n", short_hash(it.hash).c_str(), r.backend.c_str(),
                target.c_str(), r.summary.c_str(), r.io.c_str(), r.compile_ms, human(it.size).c_str(),
                when(it.used).c_str());
  }
  if (items.empty()) std::printf("(no entries in %s)\n", dir.c_str());
  return 0;
}

int cmd_show(const std::string& dir, const Args& a) {
  const std::string& prefix = a.positional[0];
  auto items = scan(dir, false);
  std::vector<Item> match;
  for (Item& it : items)
    if (it.hash.rfind(prefix, 0) == 0) match.push_back(it);
  if (match.empty()) throw Error{"no entry " + prefix + " in " + dir};
  if (match.size() > 1) throw Error{"'" + prefix + "' matches " + std::to_string(match.size()) + " entries; give more digits"};
  Item it = match[0];
  auto bytes = disk::read_file(it.path.string());
  if (!bytes) throw Error{"cannot read " + it.path.string()};
  std::string why;
  auto r = disk::decode(*bytes, &why);
  if (!r) throw Error{"entry " + it.hash + " is bad: " + why};
  if (a.json) {
    std::printf("{\"hash\": %s, \"key\": %s, \"backend\": %s, \"target\": %s, \"name\": %s, \"summary\": %s, "
                "\"io\": %s, \"compile_ms\": %.3f, \"created\": %lld, \"last_use\": %lld, \"size\": %llu, "
                "\"binary_bytes\": %zu, \"log\": %s, \"source\": %s}\n",
                json(it.hash).c_str(), json(r->key).c_str(), json(r->backend).c_str(), json(r->target).c_str(),
                json(r->name).c_str(), json(r->summary).c_str(), json(r->io).c_str(), r->compile_ms,
                static_cast<long long>(r->created), static_cast<long long>(it.used),
                static_cast<unsigned long long>(it.size), r->binary.size(), json(r->log).c_str(),
                json(r->source).c_str());
    return 0;
  }
  std::printf("hash:     %s\nfile:     %s\nkernel:   %s\nbackend:  %s\ntarget:   %s\nops:      %s\noperands: %s\n"
              "compiled: %.1f ms, %s\nlast use: %s\nsize:     %s (binary %zu bytes)\nkey:      %s\n",
              it.hash.c_str(), it.path.c_str(), r->name.c_str(), r->backend.c_str(), r->target.c_str(),
              r->summary.c_str(), r->io.c_str(), r->compile_ms, when(r->created).c_str(), when(it.used).c_str(),
              human(it.size).c_str(), r->binary.size(), r->key.c_str());
  std::printf("\n--- compile log ---\n%s\n", r->log.empty() ? "(empty)" : r->log.c_str());
  std::printf("\n--- source (%s) ---\n%s\n", r->backend == "cuda" ? "CUDA C" : "LLVM IR", r->source.c_str());
  return 0;
}

int cmd_stats(const std::string& dir, const Args& a) {
  auto items = scan(dir);
  struct Totals {
    uint64_t entries = 0, bytes = 0;
    double compile_ms = 0;
  };
  std::map<std::string, Totals> per;
  uint64_t bad = 0, bad_bytes = 0, total = 0;
  for (const Item& it : items) {
    total += it.size;
    if (!it.record) {
      ++bad;
      bad_bytes += it.size;
      continue;
    }
    Totals& t = per[it.record->backend + " " + short_target(*it.record)];
    ++t.entries;
    t.bytes += it.size;
    t.compile_ms += it.record->compile_ms;
  }
  if (a.json) {
    std::printf("{\"dir\": %s, \"entries\": %zu, \"bytes\": %llu, \"bad\": %llu, \"targets\": [", json(dir).c_str(),
                items.size(), static_cast<unsigned long long>(total), static_cast<unsigned long long>(bad));
    bool first = true;
    for (const auto& [name, t] : per) {
      std::printf("%s{\"target\": %s, \"entries\": %llu, \"bytes\": %llu, \"compile_ms\": %.3f}", first ? "" : ", ",
                  json(name).c_str(), static_cast<unsigned long long>(t.entries),
                  static_cast<unsigned long long>(t.bytes), t.compile_ms);
      first = false;
    }
    std::printf("]}\n");
    return 0;
  }
  std::printf("cache: %s\nentries: %zu, %s on disk\n", dir.c_str(), items.size(), human(total).c_str());
  // Per backend and target (the CPU name or GPU architecture; 'list --json' has the full target).
  for (const auto& [name, t] : per)
    std::printf("  %s: %llu entries, %s, %.1f ms of compiling saved per run that uses them all\n", name.c_str(),
                static_cast<unsigned long long>(t.entries), human(t.bytes).c_str(), t.compile_ms);
  if (bad) std::printf("  bad entries: %llu (%s); 'lazyfuse-cache verify' lists them\n",
                       static_cast<unsigned long long>(bad), human(bad_bytes).c_str());
  return 0;
}

int cmd_verify(const std::string& dir) {
  auto items = scan(dir);
  size_t bad = 0;
  for (const Item& it : items) {
    if (it.record) continue;
    ++bad;
    std::printf("BAD %s: %s\n", it.path.c_str(), it.why.c_str());
  }
  std::printf("%zu entries, %zu bad\n", items.size(), bad);
  return bad ? 1 : 0;
}

void remove_or_throw(const fs::path& p) {
  std::error_code ec;
  fs::remove(p, ec);
  if (ec) throw Error{"cannot remove " + p.string() + ": " + ec.message()};
}

int cmd_prune(const std::string& dir, const Args& a) {
  auto items = scan(dir);
  size_t removed = 0;
  uint64_t freed = 0;
  std::vector<Item> kept;
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  for (Item& it : items) {
    bool old = a.older_days && now - it.used > static_cast<int64_t>(*a.older_days * 86400);
    if (!it.record || old) {
      remove_or_throw(it.path);
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
    for (const Item& it : kept) {
      if (total <= limit) break;
      remove_or_throw(it.path);
      total -= it.size;
      ++removed;
      freed += it.size;
    }
  }
  std::printf("removed %zu entries (%s)\n", removed, human(freed).c_str());
  return 0;
}

int cmd_clear(const std::string& dir) {
  auto items = scan(dir, false);
  for (const Item& it : items) remove_or_throw(it.path);
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->path().filename().string().rfind(".tmp-", 0) == 0) fs::remove(it->path(), ec);
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
