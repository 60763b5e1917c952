// lazyfuse-cache's usage and per-command help texts (tools/lazyfuse_cache.cpp prints them).
#pragma once

#include <map>
#include <string>

namespace lf::cache_tool {

extern const char* const kUsage;
extern const std::map<std::string, std::string> kHelp;  // command -> its help

}  // namespace lf::cache_tool
