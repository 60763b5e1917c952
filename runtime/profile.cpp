#include "runtime/profile.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/config.h"

namespace lf::rt::obs {
namespace detail {
std::atomic<bool> g_profile{false}, g_trace{false}, g_any{false};
}  // namespace detail

namespace {

struct KernelRow {
  std::string name, ops;
  uint64_t launches = 0, bytes = 0, untimed = 0;  // untimed: device timings that failed
  double total_ms = 0;
  bool device = false;   // timed on the device (CUDA events)
  bool library = false;  // a library call's row (LibraryCall), not a kernel's
};

}  // namespace

// What the kernels launched inside a library call took: host ms at once, device ms as their
// timings are read (before the call's own: it is queued after them).
struct LibraryCall::Inner {
  double host_ms = 0, device_ms = 0;
};

namespace {

struct Pending {
  size_t row;
  std::unique_ptr<DeviceTimer> timer;
  std::shared_ptr<LibraryCall::Inner> add_to;    // a kernel inside a library call: its time goes there too
  std::shared_ptr<LibraryCall::Inner> subtract;  // a library call: the time of the kernels inside
};

// The library call running on this thread, if any: kernels launched meanwhile are inside it.
thread_local LibraryCall::Inner* t_inner = nullptr;
thread_local std::shared_ptr<LibraryCall::Inner>* t_inner_owner = nullptr;

struct Event {
  const char* category;
  std::string name, args;
  double ts_us, dur_us;
  int tid;
};

// The most events one trace keeps (about 100 MB of JSON); later ones are counted, not kept.
constexpr size_t kMaxEvents = size_t{1} << 20;
// Device timings kept pending before they are read (each holds two CUDA events).
constexpr size_t kMaxPending = 4096;

struct State {
  std::mutex mu;
  Clock::time_point origin = Clock::now();
  bool env_profile = false;  // LAZYFUSE_PROFILE: on from the start, reported at exit
  std::string trace_path;
  std::unordered_map<std::string, size_t> index;
  std::vector<KernelRow> rows;
  std::vector<Pending> pending;
  uint64_t flushes = 0, replays = 0;
  double flush_ms = 0, launch_host_ms = 0;
  std::vector<Event> events;
  uint64_t dropped = 0;
};

State& state() {
  static State* s = new State;  // never destroyed: flushes may run at exit
  return *s;
}

void refresh_any() {
  detail::g_any.store(detail::g_profile.load() || detail::g_trace.load(), std::memory_order_relaxed);
}

int thread_number() {
  static std::atomic<int> next{1};
  thread_local int n = next.fetch_add(1);
  return n;
}

double us_since_origin(const State& s, Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(t - s.origin).count();
}

void add_event(State& s, const char* category, std::string name, Clock::time_point start, Clock::time_point end,
               std::string args) {
  if (s.events.size() >= kMaxEvents) {
    ++s.dropped;
    return;
  }
  s.events.push_back({category, std::move(name), std::move(args), us_since_origin(s, start),
                      std::chrono::duration<double, std::micro>(end - start).count(), thread_number()});
}

// Reads the device timings still pending (waits for their launches). Under s.mu.
void resolve(State& s) {
  for (Pending& p : s.pending) {
    double ms = p.timer->elapsed_ms();
    KernelRow& r = s.rows[p.row];
    if (ms >= 0 && p.add_to) p.add_to->device_ms += ms;
    if (ms >= 0 && p.subtract) ms = std::max(0.0, ms - p.subtract->device_ms);
    if (ms >= 0) r.total_ms += ms;
    else ++r.untimed;
  }
  s.pending.clear();
}

std::string json_string(const std::string& v) {
  std::string out = "\"";
  for (unsigned char c : v) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string report_locked(State& s) {
  resolve(s);
  std::vector<const KernelRow*> rows;
  for (const KernelRow& r : s.rows) rows.push_back(&r);
  std::sort(rows.begin(), rows.end(), [](const KernelRow* a, const KernelRow* b) {
    return a->total_ms != b->total_ms ? a->total_ms > b->total_ms : a->name < b->name;
  });
  uint64_t launches = 0, calls = 0;
  size_t kernels = 0;
  double kernel_ms = 0, library_ms = 0;
  for (const KernelRow* r : rows) {
    if (r->library) {
      calls += r->launches, library_ms += r->total_ms;
    } else {
      ++kernels, launches += r->launches, kernel_ms += r->total_ms;
    }
  }
  const double floor = config().profile_floor_gbs;
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "[lazyfuse] profile: %zu kernels, %llu launches, %.3f ms in kernels", kernels,
                static_cast<unsigned long long>(launches), kernel_ms);
  out += line;
  if (rows.size() > kernels) {
    std::snprintf(line, sizeof line, "; %zu library calls, %llu calls, %.3f ms in library calls", rows.size() - kernels,
                  static_cast<unsigned long long>(calls), library_ms);
    out += line;
  }
  out += "\n";
  std::snprintf(line, sizeof line, "  %-20s %9s %11s %11s %11s %8s%s  %s\n", "kernel", "launches", "total ms", "mean us",
                "MB", "GB/s", floor > 0 ? "  x floor" : "", "ops");
  out += line;
  for (const KernelRow* r : rows) {
    uint64_t timed = r->launches - r->untimed;
    double mean_us = timed ? r->total_ms * 1e3 / static_cast<double>(timed) : 0;
    double gbs = r->total_ms > 0 ? static_cast<double>(r->bytes) * (static_cast<double>(timed) / r->launches) /
                                       (r->total_ms * 1e6)
                                 : 0;
    char gb[32] = "-", ratio[32] = "";
    if (gbs > 0) std::snprintf(gb, sizeof gb, "%.1f", gbs);
    // Time over the copy floor's time for the same bytes: 1.00 is as fast as a copy can be.
    if (floor > 0 && gbs > 0) std::snprintf(ratio, sizeof ratio, "  %7.2f", floor / gbs);
    else if (floor > 0) std::snprintf(ratio, sizeof ratio, "  %7s", "-");
    std::snprintf(line, sizeof line, "  %-20s %9llu %11.3f %11.2f %11.2f %8s%s  %s%s%s\n", r->name.c_str(),
                  static_cast<unsigned long long>(r->launches), r->total_ms, mean_us, static_cast<double>(r->bytes) / 1e6,
                  gb, ratio, r->library ? "library: " : "", r->ops.c_str(), r->device ? " [device time]" : "");
    out += line;
  }
  double host = s.flush_ms - s.launch_host_ms;
  std::snprintf(line, sizeof line,
                "[lazyfuse] profile: %llu flushes (%llu replayed plans): %.3f ms wall, host time %.4f ms per flush "
                "(outside kernel launches and library calls)\n",
                static_cast<unsigned long long>(s.flushes), static_cast<unsigned long long>(s.replays), s.flush_ms,
                s.flushes ? host / static_cast<double>(s.flushes) : 0.0);
  out += line;
  return out;
}

bool write_trace_locked(State& s) {
  if (s.trace_path.empty()) return false;
  FILE* f = std::fopen(s.trace_path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "[lazyfuse] warning: LAZYFUSE_TRACE_FILE: cannot write %s\n", s.trace_path.c_str());
    return false;
  }
  std::fprintf(f, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"dropped_events\": %llu}, \"traceEvents\": [\n",
               static_cast<unsigned long long>(s.dropped));
  std::fprintf(f, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0, \"args\": {\"name\": \"lazyfuse\"}}",
               static_cast<int>(::getpid()));
  for (const Event& e : s.events) {
    std::fprintf(f, ",\n{\"ph\": \"X\", \"cat\": \"%s\", \"name\": %s, \"pid\": %d, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f",
                 e.category, json_string(e.name).c_str(), static_cast<int>(::getpid()), e.tid, e.ts_us, e.dur_us);
    if (!e.args.empty()) std::fprintf(f, ", \"args\": {%s}", e.args.c_str());
    std::fprintf(f, "}");
  }
  std::fprintf(f, "\n]}\n");
  bool ok = std::fclose(f) == 0;
  if (!ok) std::fprintf(stderr, "[lazyfuse] warning: LAZYFUSE_TRACE_FILE: writing %s failed\n", s.trace_path.c_str());
  return ok;
}

void at_exit() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.env_profile && detail::g_profile.load()) std::fputs(report_locked(s).c_str(), stderr);
  if (!s.trace_path.empty()) write_trace_locked(s);
}

}  // namespace

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

void init() {
  static std::once_flag once;
  std::call_once(once, [] {
    State& s = state();
    {
      std::lock_guard<std::mutex> lock(s.mu);
      s.env_profile = config().profile;
      s.trace_path = config().trace_file;
    }
    if (s.env_profile) detail::g_profile.store(true);
    if (!s.trace_path.empty()) detail::g_trace.store(true);
    refresh_any();
    std::atexit(at_exit);
  });
}

namespace {

// One more call of the profile's row `key` (made by `make` on first sight): its bytes, and its
// time, from `timer` when it has one (read later: `add_to` and `subtract` as in Pending), else
// `host_ms`. Under s.mu.
void record_row(State& s, const std::string& key, const std::function<KernelRow()>& make, uint64_t bytes,
                std::unique_ptr<DeviceTimer> timer, double host_ms, std::shared_ptr<LibraryCall::Inner> add_to,
                std::shared_ptr<LibraryCall::Inner> subtract) {
  auto [it, fresh] = s.index.emplace(key, s.rows.size());
  if (fresh) s.rows.push_back(make());
  KernelRow& r = s.rows[it->second];
  ++r.launches;
  r.bytes += bytes;
  if (timer) {
    r.device = true;
    timer->stop();
    s.pending.push_back({it->second, std::move(timer), std::move(add_to), std::move(subtract)});
    if (s.pending.size() >= kMaxPending) resolve(s);
  } else {
    r.total_ms += host_ms;
  }
}

}  // namespace

void launch(const std::string& name, const std::function<std::string()>& ops, uint64_t bytes, Clock::time_point start,
            Clock::time_point end, std::unique_ptr<DeviceTimer> timer) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  double host_ms = ms_between(start, end);
  s.launch_host_ms += host_ms;
  if (t_inner) t_inner->host_ms += host_ms;
  const bool device = timer != nullptr;
  if (profiling())
    record_row(
        s, name, [&] { return KernelRow{name, ops ? ops() : std::string()}; }, bytes, std::move(timer), host_ms,
        t_inner_owner ? *t_inner_owner : nullptr, nullptr);
  // On a GPU the span is the host's enqueueing only: the kernel runs later, on the device.
  if (tracing())
    add_event(s, "launch", name, start, end,
              "\"bytes\": " + std::to_string(bytes) + (device ? ", \"device\": \"async (span is the enqueue)\"" : ""));
}

LibraryCall::LibraryCall(std::string name, std::string ops, uint64_t bytes, std::unique_ptr<DeviceTimer> timer)
    : name_(std::move(name)), ops_(std::move(ops)), bytes_(bytes), timer_(std::move(timer)), start_(now()),
      inner_(std::make_shared<Inner>()), outer_(t_inner_owner) {
  t_inner_owner = &inner_;
  t_inner = inner_.get();
}

LibraryCall::~LibraryCall() {
  const Clock::time_point end = now();
  t_inner_owner = outer_;
  t_inner = outer_ ? outer_->get() : nullptr;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  // The kernels inside added their host time already: the flush's host time is what is left.
  const double host_ms = ms_between(start_, end);
  const double own_host_ms = std::max(0.0, host_ms - inner_->host_ms);
  s.launch_host_ms += own_host_ms;
  if (t_inner) t_inner->host_ms += host_ms;  // all of it ran inside the enclosing call
  const bool device = timer_ != nullptr;
  if (profiling())
    record_row(
        s, "library|" + name_ + "|" + ops_,
        [&] {
          KernelRow r{name_, ops_};
          r.library = true;
          return r;
        },
        bytes_, std::move(timer_), own_host_ms, outer_ ? *outer_ : nullptr, inner_);
  if (tracing())
    add_event(s, "library", name_, start_, end,
              "\"ops\": " + json_string(ops_) + ", \"bytes\": " + std::to_string(bytes_) +
                  (device ? ", \"device\": \"async (span is the enqueue)\"" : ""));
}

void flush(Clock::time_point start, Clock::time_point end, bool replayed) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (profiling()) {
    ++s.flushes;
    s.replays += replayed ? 1 : 0;
    s.flush_ms += ms_between(start, end);
  }
  if (tracing()) add_event(s, "flush", replayed ? "flush (replayed plan)" : "flush", start, end, "");
}

void span(const char* category, const std::string& name, Clock::time_point start, Clock::time_point end,
          const std::string& args) {
  // A compile or a disk load inside a library call (its epilogue's) is host time, not the call's.
  if (t_inner && (std::strcmp(category, "compile") == 0 || std::strcmp(category, "load") == 0))
    t_inner->host_ms += ms_between(start, end);
  if (!tracing()) return;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  add_event(s, category, name, start, end, args);
}

void profile_begin() {
  init();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.pending.clear();
  s.index.clear();
  s.rows.clear();
  s.flushes = s.replays = 0;
  s.flush_ms = s.launch_host_ms = 0;
  detail::g_profile.store(true);
  refresh_any();
}

std::string profile_report(bool stop) {
  init();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  std::string out = report_locked(s);
  if (stop && !s.env_profile) {
    detail::g_profile.store(false);
    refresh_any();
  }
  return out;
}

bool write_trace() {
  init();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return write_trace_locked(s);
}

}  // namespace lf::rt::obs
