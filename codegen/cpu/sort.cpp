// argsort and topk groups on the CPU (Backend::sort). Each key becomes an order-preserving unsigned
// integer (NaN above +inf, -0.0 equal to 0.0, inverted for descending) packed above its position,
// so that one integer compare orders (key, position): a total order, hence a stable sort. Many rows
// spread over the thread pool, each sorted by a serial LSD radix sort (8-bit digits, passes whose
// digit is the same for every key skipped); one long row runs the radix passes over the thread
// pool (per-chunk digit histograms, offsets in digit-then-chunk order, a stable scatter per chunk).
// topk of k much smaller than n selects instead of sorting: a heap of the k best with blocks
// skipped below its top, or nth_element, then sorts the k.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "codegen/backend/sort_call.h"
#include "codegen/cpu/backend.h"
#include "codegen/ir/dtype_dispatch.h"
#include "runtime/thread_pool.h"

namespace lf::cpu {
namespace {

using u128 = unsigned __int128;

// Order-preserving keys: a < b as numbers (NaN largest, -0.0 == 0.0) iff key(a) < key(b).
inline uint32_t key32(float v) {
  if (std::isnan(v)) return 0xFFFFFFFFu;  // every NaN one key, above +inf (0xFF800000)
  if (v == 0.0f) v = 0.0f;                // -0.0 sorts with 0.0, kept in position order
  uint32_t b = std::bit_cast<uint32_t>(v);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
inline uint64_t key64(double v) {
  if (std::isnan(v)) return ~uint64_t{0};
  if (v == 0.0) v = 0.0;
  uint64_t b = std::bit_cast<uint64_t>(v);
  return (b >> 63) ? ~b : (b | (uint64_t{1} << 63));
}

// Item: the key in the high bits, the position (< 2^32) in the low 32 bits.
template <typename S, typename Item>
inline Item item_of(S s, uint32_t pos, bool descending) {
  using C = decltype(to_compute(s));
  Item key;
  if constexpr (std::is_same_v<C, double>) key = key64(static_cast<double>(s));
  else if constexpr (std::is_floating_point_v<C>) key = key32(static_cast<float>(to_compute(s)));
  else if constexpr (sizeof(S) == 8) key = static_cast<uint64_t>(s) ^ (uint64_t{1} << 63);
  else if constexpr (std::is_same_v<S, bool>) key = s ? 1u : 0u;
  else key = static_cast<uint32_t>(static_cast<int32_t>(s)) ^ 0x80000000u;
  if constexpr (sizeof(Item) == 8) key &= 0xFFFFFFFFu;
  else key &= ~uint64_t{0};
  if (descending) key = sizeof(Item) == 8 ? (~key & 0xFFFFFFFFu) : (~key & Item(~uint64_t{0}));
  return (key << 32) | pos;
}

template <typename Item>
constexpr int kKeyBytes = sizeof(Item) == 8 ? 4 : 8;

// LSD radix sort of a[0, n) by the key bits (above bit 32), stable; b is scratch of n items.
// Returns the buffer that holds the result. `chunks` > 1: each pass over the thread pool.
template <typename Item>
Item* radix_sort(Item* a, Item* b, int64_t n, int64_t chunks) {
  std::vector<std::array<int64_t, 256>> hist(static_cast<size_t>(chunks));
  auto range = [&](int64_t c) { return std::pair<int64_t, int64_t>{n * c / chunks, n * (c + 1) / chunks}; };
  auto each = [&](auto&& fn) {
    if (chunks == 1) fn(int64_t{0});
    else rt::parallel_for(chunks, fn);
  };
  for (int byte = 0; byte < kKeyBytes<Item>; ++byte) {
    const int shift = 32 + 8 * byte;
    each([&](int64_t c) {
      auto& h = hist[static_cast<size_t>(c)];
      h.fill(0);
      auto [lo, hi] = range(c);
      for (int64_t i = lo; i < hi; ++i) ++h[static_cast<uint32_t>(a[i] >> shift) & 0xFF];
    });
    // Offsets in digit-then-chunk order keep equal digits in their order: the pass is stable.
    int64_t sum = 0;
    bool trivial = false;
    for (int d = 0; d < 256; ++d) {
      int64_t digit_total = 0;
      for (auto& h : hist) {
        int64_t t = h[d];
        h[d] = sum;
        sum += t;
        digit_total += t;
      }
      trivial |= digit_total == n;
    }
    if (trivial) continue;  // every key has this digit: the pass would copy
    each([&](int64_t c) {
      auto& h = hist[static_cast<size_t>(c)];
      auto [lo, hi] = range(c);
      for (int64_t i = lo; i < hi; ++i) b[h[static_cast<uint32_t>(a[i] >> shift) & 0xFF]++] = a[i];
    });
    std::swap(a, b);
  }
  return a;
}

// Below this a comparison sort beats the radix passes' fixed cost (256 counters a pass).
constexpr int64_t kSmallRow = 256;
// Rows at least this long, fewer than the threads, sort over the thread pool one at a time.
constexpr int64_t kParallelRow = int64_t{1} << 16;

// Whether topk selects (nth_element, then sorts the k) rather than sorting the whole row.
bool selects(int64_t k, int64_t n) { return k < n && (k <= 256 || k * 8 <= n); }
// Up to this k a selecting row tries the threshold heap first (Sorter::select_by_threshold).
constexpr int64_t kThresholdMaxK = 1024;

template <typename S, typename Item>
struct Sorter {
  const backend::SortRows& call;
  const S* x;
  int64_t* out;
  S* values;  // sort's values, or null (SortCall::values)

  void load(int64_t r, Item* a) const {
    const S* row = x + call.at(r, 0);  // the division in at() once a row, not once an element
    for (int64_t j = 0; j < call.n; ++j)
      a[j] = item_of<S, Item>(row[j * call.stride_n], static_cast<uint32_t>(j), call.descending);
  }
  // Places [lo, hi) of row r (all of it by default): the positions, and the values where asked.
  void store(int64_t r, const Item* a, int64_t lo = 0, int64_t hi = -1) const {
    if (hi < 0) hi = call.kept;
    int64_t o = r / call.inner, i = r % call.inner;
    for (int64_t j = lo; j < hi; ++j)
      out[(o * call.kept + j) * call.inner + i] = static_cast<int64_t>(static_cast<uint32_t>(a[j]));
    if (!values) return;
    const S* row = x + call.at(r, 0);  // the keys as they are (the items hold their order-preserving form)
    for (int64_t j = lo; j < hi; ++j)
      values[(o * call.kept + j) * call.inner + i] = row[static_cast<uint32_t>(a[j]) * call.stride_n];
  }
  void store_parallel(int64_t r, const Item* a, int64_t chunks) const {
    rt::parallel_for(chunks, [&](int64_t c) { store(r, a, call.kept * c / chunks, call.kept * (c + 1) / chunks); });
  }

  // topk by threshold: the k smallest items so far in a max-heap at a[0, k), the rest of the row
  // in blocks of 64 keys, each block skipped unless one of its keys beats the heap's top (after
  // the first few blocks almost every block of a random row is: a compare an element, no item
  // array, no partitioning passes). False, having done nothing useful, when the row keeps
  // beating the top (an adversarial order: the heap would cost n log k): nth_element then.
  bool select_by_threshold(int64_t r, Item* a) const {
    const int64_t n = call.n, k = call.kept;
    const S* row = x + call.at(r, 0);
    for (int64_t j = 0; j < k; ++j)
      a[j] = item_of<S, Item>(row[j * call.stride_n], static_cast<uint32_t>(j), call.descending);
    std::make_heap(a, a + k);
    constexpr int64_t kBlock = 64;
    Item block[kBlock];
    int64_t inserts = 0;
    for (int64_t j0 = k; j0 < n; j0 += kBlock) {
      const int64_t m = std::min(kBlock, n - j0);
      const Item top = a[0];
      bool any = false;
      for (int64_t t = 0; t < m; ++t) {
        block[t] = item_of<S, Item>(row[(j0 + t) * call.stride_n], static_cast<uint32_t>(j0 + t), call.descending);
        any |= block[t] < top;
      }
      if (!any) continue;
      for (int64_t t = 0; t < m; ++t) {
        if (!(block[t] < a[0])) continue;
        std::pop_heap(a, a + k);
        a[k - 1] = block[t];
        std::push_heap(a, a + k);
        ++inserts;
      }
      if (inserts > n / 16 + 4 * k) return false;
    }
    std::sort_heap(a, a + k);
    store(r, a);
    return true;
  }

  // One row on this thread; a and b hold n items each.
  void row(int64_t r, Item* a, Item* b) const {
    const int64_t n = call.n, k = call.kept;
    if (selects(k, n) && k <= kThresholdMaxK && k > 0 && select_by_threshold(r, a)) return;
    load(r, a);
    if (selects(k, n)) {
      std::nth_element(a, a + k, a + n);
      std::sort(a, a + k);
    } else if (n <= kSmallRow) {
      std::sort(a, a + n);
    } else {
      a = radix_sort(a, b, n, 1);
    }
    store(r, a);
  }

  // One long row over the thread pool.
  void long_row(int64_t r, Item* a, Item* b, int64_t chunks) const {
    const int64_t n = call.n, k = call.kept;
    rt::parallel_for(chunks, [&](int64_t c) {
      const S* row = x + call.at(r, 0);
      for (int64_t j = n * c / chunks; j < n * (c + 1) / chunks; ++j)
        a[j] = item_of<S, Item>(row[j * call.stride_n], static_cast<uint32_t>(j), call.descending);
    });
    if (selects(k, n) && k * chunks <= n) {
      // Each chunk keeps its k smallest; the k smallest of those are the row's.
      std::vector<Item> best(static_cast<size_t>(k * chunks));
      rt::parallel_for(chunks, [&](int64_t c) {
        Item* lo = a + n * c / chunks;
        Item* hi = a + n * (c + 1) / chunks;
        int64_t m = std::min<int64_t>(k, hi - lo);
        std::nth_element(lo, lo + m - 1, hi);
        std::copy(lo, lo + m, best.data() + k * c);
        std::fill(best.data() + k * c + m, best.data() + k * (c + 1), ~Item(0));
      });
      std::nth_element(best.begin(), best.begin() + k, best.end());
      std::sort(best.begin(), best.begin() + k);
      return store(r, best.data());
    }
    store_parallel(r, radix_sort(a, b, n, chunks), chunks);
  }

  void run() const {
    const int64_t rows = call.rows(), n = call.n;
    const int64_t threads = rt::num_cpu_threads();
    if (n >= kParallelRow && rows < threads && threads > 1) {
      // Uninitialized: zeroing 2 x 16 bytes an element first cost as much as a radix pass.
      std::unique_ptr<Item[]> a(new Item[static_cast<size_t>(n)]), b(new Item[static_cast<size_t>(n)]);
      int64_t chunks = std::min<int64_t>(threads, n / 4096);
      for (int64_t r = 0; r < rows; ++r) long_row(r, a.get(), b.get(), chunks);
      return;
    }
    int64_t chunks = std::min<int64_t>(rows, 8 * threads);
    rt::parallel_for(chunks, [&](int64_t c) {
      std::vector<Item> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
      for (int64_t r = rows * c / chunks; r < rows * (c + 1) / chunks; ++r) row(r, a.data(), b.data());
    });
  }
};

// The positions of `rows` into `out` (int64), the values into `values` (the keys' dtype) unless null.
void sort_rows(const backend::SortRows& rows, void* out, void* values) {
  dispatch(rows.dtype, [&](auto tag) {
    using S = typename decltype(tag)::storage_t;
    const S* x = static_cast<const S*>(rows.data);
    int64_t* o = static_cast<int64_t*>(out);
    S* v = static_cast<S*>(values);
    if constexpr (sizeof(S) == 8) Sorter<S, u128>{rows, x, o, v}.run();
    else Sorter<S, uint64_t>{rows, x, o, v}.run();
  });
}

}  // namespace

void run_sort(backend::SortCall& call) {
  ir::Node* y = call.node();
  if (call.n > int64_t{0xFFFFFFFF}) return backend::run_sort_on_reference(call, "a row of 2^32 elements or more");
  auto out = rt::Storage::allocate(y->device, static_cast<size_t>(y->numel()) * sizeof(int64_t));
  void* values = call.values ? call.values->data() : nullptr;
  sort_rows(call, out->data(), values);
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += static_cast<uint64_t>(call.rows() * call.n) * dtype_size(call.dtype) +
                                static_cast<uint64_t>(y->numel()) * (sizeof(int64_t) + (call.values ? dtype_size(call.dtype) : 0));
  if (call.record) {  // for a flush plan: the keys' buffer, the positions, the values (or null)
    call.record->outputs.emplace_back(y, out);
    if (call.values) call.record->outputs.emplace_back(call.values_node(), call.values);
    call.record->addresses = {call.data, out->data(), values};
    call.record->replay = [rows = static_cast<const backend::SortRows&>(call)](void* const* p) mutable {
      rows.data = p[0];
      sort_rows(rows, p[1], p[2]);
    };
  }
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  const bool wide = dtype_size(call.dtype) == 8;
  const bool long_rows = call.n >= kParallelRow && call.rows() < rt::num_cpu_threads() && rt::num_cpu_threads() > 1;
  std::string how = !selects(call.kept, call.n) ? "LSD radix sort on order-preserving keys per row"
                    : !long_rows && call.kept <= kThresholdMaxK
                        ? "selection per row (a heap of the k best, blocks of 64 skipped below its top; nth_element where "
                          "the row keeps beating it)"
                        : "partial sort (nth_element, then the k) per row";
  how += long_rows ? ", each row over the thread pool" : ", rows over the thread pool";
  call.log(how + (wide ? " (64-bit keys)" : " (32-bit keys)"));
}

}  // namespace lf::cpu
