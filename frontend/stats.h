// The process-wide counters behind lf::cache_stats().
#pragma once

#include "lazyfuse/runtime.h"

namespace lf::detail {

using Stats = CacheStats;
Stats& stats();

}  // namespace lf::detail
