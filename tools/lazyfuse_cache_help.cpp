// lazyfuse-cache's usage and per-command help texts.
#include "tools/lazyfuse_cache_help.h"

namespace lf::cache_tool {

const char* const kUsage =
    "usage: lazyfuse-cache [--dir DIR] COMMAND [OPTIONS]\n"
    "\n"
    "Inspects LazyFuse's persistent kernel cache (default: LAZYFUSE_CACHE_DIR, else\n"
    "$XDG_CACHE_HOME/lazyfuse, else ~/.cache/lazyfuse).\n"
    "\n"
    "commands:\n"
    "  list [--sort=use|hits|size|time|name] [--json]  one line per entry\n"
    "  show HASH|KERNEL [--json]                   the whole entry: why, key, source, compile log\n"
    "  stats [--json]                              totals per backend, programs' hit rates, disk use\n"
    "  verify                                      checks every entry; exit 1 if any is bad\n"
    "  prune [--max-mb N] [--older-than DAYS] [--yes]  removes least recently used / old entries\n"
    "  clear                                       removes every entry\n"
    "\n"
    "'lazyfuse-cache COMMAND --help' describes one command.\n";

const std::map<std::string, std::string> kHelp = {
    {"list",
     "usage: lazyfuse-cache list [--sort=use|hits|size|time|name] [--json]\n"
     "One line per entry: kernel name (lf_<hash>, as in LAZYFUSE_LOG, dumps, profiles and traces), backend\n"
     "and target, fused ops, operand dtypes and layout classes, compile ms, size, hits (times programs\n"
     "loaded it from disk), last use, and why it was compiled. --sort: use (most recent\n"
     "first, the default), hits (most first), size (largest first), time (slowest compile first),\n"
     "name (hash). Bad entries are listed as BAD.\n"},
    {"show",
     "usage: lazyfuse-cache show HASH|KERNEL [--json]\n"
     "Prints one entry: why it was compiled, key, backend, target, summary, compile log and generated\n"
     "source. HASH may be any unique prefix of an entry's hash; KERNEL a kernel name as the logs print\n"
     "it (lf_<hash>, or lf_ and a unique prefix). A prefix of several entries is an error that says\n"
     "how many it matches.\n"},
    {"stats",
     "usage: lazyfuse-cache stats [--json]\n"
     "Entries, bytes and compile time saved per backend; disk use; entry hits; and what the programs\n"
     "that used the cache recorded: per backend, runs, kernels loaded from disk and kernels compiled,\n"
     "and the hit rate (loaded / (loaded + compiled)).\n"},
    {"verify",
     "usage: lazyfuse-cache verify\n"
     "Checks every entry's checksum and format, and that the hit counts and the programs record parse;\n"
     "lists bad files; exit 1 if any.\n"},
    {"prune",
     "usage: lazyfuse-cache prune [--max-mb N] [--older-than DAYS] [--yes]\n"
     "--max-mb N: removes least recently used entries until the cache holds at most N MiB (N <= 2^40).\n"
     "N = 0 removes every entry and is refused unless --yes confirms it (clear does the same).\n"
     "--older-than DAYS: removes entries not used for DAYS days (DAYS <= 10^7). Bad entries (special files\n"
     "and symlinks named like entries included) are removed too.\n"},
    {"clear",
     "usage: lazyfuse-cache clear\n"
     "Removes every entry, its hit count, the programs record and leftover temporary files.\n"},
};

}  // namespace lf::cache_tool
