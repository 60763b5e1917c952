// scatter_add and the scatter row (scatter, scatter_reduce, index_put, ...) on the CPU over the
// thread pool, deterministic: the result does not depend on the number of threads (chunks are fixed
// sizes of the index, not a share per thread).
// - A sum with self into a small output from many values (bincount, k-means sums): each chunk adds
//   its values into bins of its own, in the compute type; the bins are then added to self in chunk
//   order.
// - Otherwise: values are sorted (stably, a counting sort) into buckets by output range, and each
//   bucket applies its values in the index's row-major order, each step rounded to the dtype (the
//   reduce modes of codegen/reference/scatter.h; assign: the last value wins): the reference
//   executor's result, bit for bit.
// An index out of range is an lf::Error naming the first bad index in row-major order.
#include <algorithm>
#include <cstring>
#include <vector>

#include "codegen/backend/scan_scatter.h"
#include "codegen/cpu/backend.h"
#include "codegen/ir/dtype_dispatch.h"
#include "codegen/reference/math.h"
#include "codegen/reference/scatter.h"
#include "runtime/thread_pool.h"

namespace lf::cpu {
namespace {

constexpr int64_t kChunk = int64_t{1} << 16;     // index elements per chunk
constexpr int64_t kSmallOut = int64_t{1} << 16;  // outputs at most this many: per-chunk bins
constexpr int64_t kMaxBins = 32;                 // bin sets at most (memory: kMaxBins * outputs)
constexpr int64_t kBuckets = 64;                 // output ranges of the ordered path, at most

// Walks index elements in row-major order, keeping the index's, src's and output's offsets (the
// output's without the axis term, which the index value gives).
struct Walker {
  const backend::ScatterArgs& c;
  int64_t coord[backend::ScatterArgs::kMaxRank] = {};
  int64_t index_off = 0, src_off = 0, out_off = 0;

  Walker(const backend::ScatterArgs& call, int64_t e) : c(call) {
    for (int d = c.rank; d-- > 0;) {
      coord[d] = e % c.shape[d];
      e /= c.shape[d];
      index_off += coord[d] * c.index_strides[d];
      src_off += coord[d] * c.src_strides[d];
      if (d != c.axis) out_off += coord[d] * c.out_strides[d];
    }
  }
  void next() {
    for (int d = c.rank; d-- > 0;) {
      index_off += c.index_strides[d];
      src_off += c.src_strides[d];
      if (d != c.axis) out_off += c.out_strides[d];
      if (++coord[d] < c.shape[d]) return;
      index_off -= coord[d] * c.index_strides[d];
      src_off -= coord[d] * c.src_strides[d];
      if (d != c.axis) out_off -= coord[d] * c.out_strides[d];
      coord[d] = 0;
    }
  }
  // The output offset of the current element; -1 when its index is out of range (*raw: the index).
  template <typename I>
  int64_t target(int64_t* raw) const {
    *raw = static_cast<const I*>(c.index)[index_off];
    int64_t i = *raw < 0 ? *raw + c.axis_size : *raw;
    if (i < 0 || i >= c.axis_size) return -1;
    return out_off + i * c.out_strides[c.axis];
  }
};

struct BadIndex {
  int64_t element = -1, raw = 0;  // element -1: none
};

void throw_first(const backend::ScatterArgs& call, const std::vector<BadIndex>& bad) {
  for (const BadIndex& b : bad)
    if (b.element >= 0) call.index_error(b.raw);
}

template <typename S, typename C, typename I>
void scatter_bins(const backend::ScatterArgs& call, S* out) {
  int64_t sets = std::min(kMaxBins, (call.count + kChunk - 1) / kChunk);
  std::vector<C> bins(static_cast<size_t>(sets * call.out_numel), C(0));
  std::vector<BadIndex> bad(static_cast<size_t>(sets));
  const S* src = static_cast<const S*>(call.src);
  rt::parallel_for(sets, [&](int64_t s) {
    int64_t e0 = call.count * s / sets, e1 = call.count * (s + 1) / sets;
    C* mine = bins.data() + s * call.out_numel;
    Walker w(call, e0);
    for (int64_t e = e0; e < e1; ++e, w.next()) {
      int64_t raw, off = w.template target<I>(&raw);
      if (off < 0) {
        bad[static_cast<size_t>(s)] = {e, raw};
        return;
      }
      mine[off] = ref::add(mine[off], to_compute(src[w.src_off]));
    }
  });
  throw_first(call, bad);
  const S* self = static_cast<const S*>(call.self);
  for (int64_t i = 0; i < call.out_numel; ++i) {
    C acc = to_compute(self[i]);
    for (int64_t s = 0; s < sets; ++s) acc = ref::add(acc, bins[static_cast<size_t>(s * call.out_numel + i)]);
    out[i] = from_value<S>(acc);
  }
}

template <typename S, typename C, typename I>
void scatter_ordered(const backend::ScatterArgs& call, S* out) {
  std::memcpy(out, call.self, static_cast<size_t>(call.out_numel) * sizeof(S));
  int64_t chunks = (call.count + kChunk - 1) / kChunk;
  // Ranges of a power-of-two size, so that an output's range is a shift, not a division.
  int shift = 0;
  while ((int64_t{1} << shift) * kBuckets < call.out_numel) ++shift;
  int64_t buckets = ((call.out_numel - 1) >> shift) + 1;
  auto bucket_of = [shift](int64_t off) { return off >> shift; };
  std::vector<int64_t> target(static_cast<size_t>(call.count));
  std::vector<int64_t> counts(static_cast<size_t>(chunks * buckets), 0);
  std::vector<BadIndex> bad(static_cast<size_t>(chunks));
  rt::parallel_for(chunks, [&](int64_t c) {
    Walker w(call, c * kChunk);
    for (int64_t e = c * kChunk; e < std::min(call.count, (c + 1) * kChunk); ++e, w.next()) {
      int64_t raw, off = w.template target<I>(&raw);
      if (off < 0) {
        bad[static_cast<size_t>(c)] = {e, raw};
        return;
      }
      target[static_cast<size_t>(e)] = off;
      ++counts[static_cast<size_t>(c * buckets + bucket_of(off))];
    }
  });
  throw_first(call, bad);
  // counts -> where each chunk's entries of each bucket start: bucket by bucket, chunks in order.
  std::vector<int64_t> bucket_start(static_cast<size_t>(buckets + 1), 0);
  int64_t pos = 0;
  for (int64_t b = 0; b < buckets; ++b) {
    bucket_start[static_cast<size_t>(b)] = pos;
    for (int64_t c = 0; c < chunks; ++c) {
      int64_t n = counts[static_cast<size_t>(c * buckets + b)];
      counts[static_cast<size_t>(c * buckets + b)] = pos;
      pos += n;
    }
  }
  bucket_start[static_cast<size_t>(buckets)] = pos;
  struct Entry {
    int64_t out, src;
  };
  std::vector<Entry> entries(static_cast<size_t>(call.count));
  rt::parallel_for(chunks, [&](int64_t c) {
    Walker w(call, c * kChunk);
    int64_t* next = counts.data() + c * buckets;
    for (int64_t e = c * kChunk; e < std::min(call.count, (c + 1) * kChunk); ++e, w.next()) {
      int64_t off = target[static_cast<size_t>(e)];
      entries[static_cast<size_t>(next[bucket_of(off)]++)] = {off, w.src_off};
    }
  });
  const S* src = static_cast<const S*>(call.src);
  const ir::ScatterReduce mode = call.reduce;
  // A bucket owns its output range: its identities, steps and mean counts touch no other bucket's.
  std::vector<int64_t> hits(mode == ir::ScatterReduce::Mean ? static_cast<size_t>(call.out_numel) : 0, 0);
  rt::parallel_for(buckets, [&](int64_t b) {
    const Entry* first = entries.data() + bucket_start[static_cast<size_t>(b)];
    const Entry* last = entries.data() + bucket_start[static_cast<size_t>(b + 1)];
    if (!call.include_self && mode != ir::ScatterReduce::Assign)
      for (const Entry* en = first; en != last; ++en) out[en->out] = from_value<S>(ref::scatter_identity<C>(mode));
    if (mode == ir::ScatterReduce::Sum) {  // scatter_add's path, the mode's switch out of the loop
      for (const Entry* en = first; en != last; ++en)
        out[en->out] = from_value<S>(ref::add(to_compute(out[en->out]), to_compute(src[en->src])));
    } else {
      for (const Entry* en = first; en != last; ++en)
        out[en->out] = from_value<S>(ref::scatter_combine<C>(mode, to_compute(out[en->out]), to_compute(src[en->src])));
    }
    if (mode != ir::ScatterReduce::Mean) return;
    for (const Entry* en = first; en != last; ++en) ++hits[static_cast<size_t>(en->out)];
    for (const Entry* en = first; en != last; ++en) {
      int64_t& h = hits[static_cast<size_t>(en->out)];
      if (h == 0) continue;  // divided already (a duplicate)
      out[en->out] = from_value<S>(ref::scatter_mean<C>(to_compute(out[en->out]), h + (call.include_self ? 1 : 0)));
      h = 0;
    }
  });
}

// A sum with self into a small output from many values: per-chunk bins.
bool use_bins(const backend::ScatterArgs& a) {
  return a.reduce == ir::ScatterReduce::Sum && a.include_self && a.out_numel <= kSmallOut && a.count >= 4 * kChunk;
}

// The scatter of `a` into `out` (out_numel elements of a.dtype); throws the first index error.
void scatter_into(const backend::ScatterArgs& a, void* out) {
  if (a.out_numel > 0) {
    dispatch(a.dtype, [&](auto tag) {
      using S = typename decltype(tag)::storage_t;
      using C = typename decltype(tag)::compute_t;
      S* o = static_cast<S*>(out);
      bool bins = use_bins(a);
      if (a.count == 0) {
        std::memcpy(o, a.self, static_cast<size_t>(a.out_numel) * sizeof(S));
      } else if constexpr (std::is_same_v<S, bool>) {  // assign only (the frontend refuses bool sums)
        a.index_dtype == DType::Int32 ? scatter_ordered<S, C, int32_t>(a, o) : scatter_ordered<S, C, int64_t>(a, o);
      } else if (a.index_dtype == DType::Int32) {
        bins ? scatter_bins<S, C, int32_t>(a, o) : scatter_ordered<S, C, int32_t>(a, o);
      } else {
        bins ? scatter_bins<S, C, int64_t>(a, o) : scatter_ordered<S, C, int64_t>(a, o);
      }
    });
  } else if (a.count > 0) {
    // Nothing to write, but every index is still out of range of an empty dim.
    a.index_error(a.index_dtype == DType::Int32 ? static_cast<const int32_t*>(a.index)[0]
                                                : static_cast<const int64_t*>(a.index)[0]);
  }
}

}  // namespace

void run_scatter(backend::ScatterCall& call) {
  ir::Node* y = call.node();
  auto out = rt::Storage::allocate(y->device, static_cast<size_t>(call.out_numel) * dtype_size(call.dtype));
  scatter_into(call, out->data());
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += static_cast<uint64_t>(2 * call.out_numel + call.count) * dtype_size(call.dtype) +
                                static_cast<uint64_t>(call.count) * dtype_size(call.index_dtype);
  if (call.record) call.record_call(out, scatter_into, nullptr);  // an index error throws as it is met
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  call.log(use_bins(call) ? "per-chunk bins on the thread pool, added in chunk order"
                : "counting sort into output ranges on the thread pool, each range in index order");
}

}  // namespace lf::cpu
