// Indexing, scatter, scans and sorting (issue 23): values against hand-computed ones (so the
// oracle itself is checked), fused and unfused against the reference executor, fusion of a gather
// into its consumers' kernel, and index errors at the sync point.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"

namespace {

using lf::DType;
using lf::Tensor;
using lf::test::FusionScope;

Tensor ints(std::vector<int64_t> v, lf::Shape s) { return lf::from_vector(std::move(v), std::move(s)); }
Tensor floats(std::vector<float> v, lf::Shape s) { return lf::from_vector(std::move(v), std::move(s)); }

class Indexing : public ::testing::TestWithParam<bool> {};  // fusion on, off

TEST_P(Indexing, GathersMatchHandComputedValues) {
  FusionScope scope(GetParam());
  Tensor x = lf::arange(0.0, 12).reshape({3, 4});  // [[0..3], [4..7], [8..11]]
  EXPECT_EQ(lf::index_select(x, 1, ints({3, 0, -1}, {3})).to_vector<float>(),
            (std::vector<float>{3, 0, 3, 7, 4, 7, 11, 8, 11}));
  EXPECT_EQ(lf::index_select(x, 0, ints({2}, {})).shape(), (lf::Shape{1, 4}));
  EXPECT_EQ(lf::gather(x, 1, ints({1, 0, 3, 3}, {2, 2})).to_vector<float>(), (std::vector<float>{1, 0, 7, 7}));
  EXPECT_EQ(lf::gather(x, 0, ints({2, 0, -3}, {1, 3})).to_vector<float>(), (std::vector<float>{8, 1, 2}));
  EXPECT_EQ(lf::take_along_dim(x, ints({3, 1, 0}, {3, 1}), 1).to_vector<float>(), (std::vector<float>{3, 5, 8}));
  EXPECT_EQ(lf::take_along_dim(x, ints({0, 2}, {1, 2}), -1).to_vector<float>(),
            (std::vector<float>{0, 2, 4, 6, 8, 10}));  // broadcast over dim 0
  EXPECT_EQ(lf::take(x.transpose(0, 1), ints({1, -1}, {2})).to_vector<float>(), (std::vector<float>{4, 11}));
  Tensor e = lf::embedding(x, ints({2, 0, 2, 1}, {2, 2}));
  EXPECT_EQ(e.shape(), (lf::Shape{2, 2, 4}));
  EXPECT_EQ(lf::slice(e, 0, 1, 2).to_vector<float>(), (std::vector<float>{8, 9, 10, 11, 4, 5, 6, 7}));
  EXPECT_EQ(lf::index_select(x, 0, ints({}, {0})).shape(), (lf::Shape{0, 4}));
}

TEST_P(Indexing, ScattersScansAndSortsMatchHandComputedValues) {
  FusionScope scope(GetParam());
  Tensor z = lf::zeros({2, 3});
  // Duplicate indices add up (in order: deterministic).
  EXPECT_EQ(lf::index_add(z, 1, ints({2, 2, -3}, {3}), lf::ones({2, 3}), 2).to_vector<float>(),
            (std::vector<float>{2, 0, 4, 2, 0, 4}));
  EXPECT_EQ(lf::scatter_add(lf::zeros({3}), 0, ints({0, 2, 0}, {3}), floats({1, 2, 3}, {3})).to_vector<float>(),
            (std::vector<float>{4, 0, 2}));
  EXPECT_EQ(lf::bincount(ints({1, 1, 3}, {3})).to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 0, 1}));
  EXPECT_EQ(lf::bincount(ints({1, 1}, {2}), floats({0.5f, 2}, {2}), 3).to_vector<float>(),
            (std::vector<float>{0, 2.5f, 0}));
  EXPECT_EQ(lf::bincount(ints({}, {0})).numel(), 0);
  EXPECT_EQ(lf::one_hot(ints({2, 0}, {2}), 3).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 1, 0, 0}));
  EXPECT_EQ(lf::masked_fill(lf::arange(0, 4, 1, DType::Int32), floats({1, 0, 0, 1}, {4}) > 0.5f, 7).to_vector<int32_t>(),
            (std::vector<int32_t>{7, 1, 2, 7}));
  Tensor x = lf::arange(1.0, 7).reshape({2, 3});
  EXPECT_EQ(lf::cumsum(x, 1).to_vector<float>(), (std::vector<float>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(lf::cumsum(x, 0).to_vector<float>(), (std::vector<float>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(lf::cumprod(x, -1).to_vector<float>(), (std::vector<float>{1, 2, 6, 4, 20, 120}));
  EXPECT_EQ(lf::cumsum(lf::from_vector(std::vector<bool>{true, false, true}, {3}), 0).dtype(), DType::Int64);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor v = floats({3, nan, 1, 2, 1}, {5});
  auto [up, ui] = lf::sort(v);
  EXPECT_EQ(ui.to_vector<int64_t>(), (std::vector<int64_t>{2, 4, 3, 0, 1}));  // stable, NaN last
  EXPECT_TRUE(std::isnan(up.to_vector<float>()[4]));
  EXPECT_EQ(lf::argsort(v, 0, true).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 3, 2, 4}));  // NaN first
  auto [tv, ti] = lf::topk(floats({1, 5, 3, 5, 0}, {5}), 3);
  EXPECT_EQ(tv.to_vector<float>(), (std::vector<float>{5, 5, 3}));
  EXPECT_EQ(ti.to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 2}));
  EXPECT_EQ(lf::topk(floats({1, 5, 3}, {3}), 2, 0, false).second.to_vector<int64_t>(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(lf::sort(x.transpose(0, 1), 0, true).first.to_vector<float>(), (std::vector<float>{3, 6, 2, 5, 1, 4}));
}

// Random inputs of every dtype through views, with producers and consumers, against the oracle.
TEST_P(Indexing, RandomMatchesReference) {
  FusionScope scope(GetParam());
  lf::test::Rng rng(23);
  for (DType dt : {DType::Bool, DType::Int32, DType::Int64, DType::Float16, DType::BFloat16, DType::Float32,
                   DType::Float64}) {
    for (int rep = 0; rep < 4; ++rep) {
      int64_t a = rng.range(0, 1) ? 1 : rng.range(2, 9), b = rng.range(1, 70), c = rng.range(1, 5);
      Tensor src = lf::cast((lf::rand({b, a, c}) - 0.5) * 40, dt).permute({1, 0, 2});  // [a, b, c], strided
      std::vector<int64_t> iv(static_cast<size_t>(rng.range(0, 40)));
      for (int64_t& i : iv) i = rng.range(-b, b - 1);
      Tensor idx = ints(iv, {static_cast<int64_t>(iv.size())});
      Tensor idx32 = lf::cast(idx + 0, DType::Int32);  // computed, in the gather's group
      lf::test::expect_matches_reference(lf::index_select(src, 1, idx), 1, "index_select");
      if (dt != DType::Bool) {
        lf::test::expect_matches_reference(lf::index_select(src, 1, idx32) * 3 + 1, 1, "index_select consumer");
        lf::test::expect_matches_reference(lf::cumsum(src, 1), b, "cumsum");
        lf::test::expect_matches_reference(lf::index_add(src, 1, idx, lf::ones({a, static_cast<int64_t>(iv.size()), c}, dt)),
                                           1, "index_add");
      }
      Tensor g = ints(std::vector<int64_t>(static_cast<size_t>(a * 3 * c), -1), {a, 3, c});
      lf::test::expect_matches_reference(lf::gather(src, 1, g), 1, "gather");
      lf::test::expect_matches_reference(lf::sort(src, 1, rep % 2 == 1).first, 1, "sort");
      lf::test::expect_matches_reference(lf::embedding(src.reshape({a * b, c}), idx.reshape({-1, 1})), 1,
                                         "embedding");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FusedAndUnfused, Indexing, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "Unfused"; });

// F.embedding's max_norm: rows over the norm are scaled to it (PyTorch's max_norm / (norm + 1e-7)),
// the others kept; against a host computation, the reference, and as one row kernel with the gather.
TEST_P(Indexing, EmbeddingMaxNormRenormalizesRowsOverIt) {
  FusionScope scope(GetParam());
  Tensor w = lf::rand({20, 8}) * 2 - 1;
  w.to_vector<float>();
  Tensor ids = ints({3, 19, 0, 3, 7, 12}, {2, 3});
  std::vector<float> hw = w.to_vector<float>();
  std::vector<int64_t> hid = ids.to_vector<int64_t>();
  for (double p : {2.0, 1.0}) {
    Tensor y = lf::embedding(w, ids, std::nullopt, 1.0, p);
    EXPECT_EQ(y.shape(), (lf::Shape{2, 3, 8}));
    std::vector<float> got = y.to_vector<float>();
    for (size_t r = 0; r < hid.size(); ++r) {
      double n = 0;
      for (int64_t j = 0; j < 8; ++j) {
        double e = hw[static_cast<size_t>(hid[r] * 8 + j)];
        n += p == 2 ? e * e : std::fabs(e);
      }
      if (p == 2) n = std::sqrt(n);
      double scale = n > 1.0 ? 1.0 / (n + 1e-7) : 1.0;
      for (int64_t j = 0; j < 8; ++j)
        EXPECT_NEAR(got[r * 8 + static_cast<size_t>(j)], hw[static_cast<size_t>(hid[r] * 8 + j)] * scale, 1e-5)
            << "p " << p << " row " << r;
    }
    lf::test::expect_matches_reference(lf::embedding(w, ids, std::nullopt, 1.0, p), 8, "max_norm");
  }
  // padding_idx changes no forward value.
  EXPECT_EQ(lf::embedding(w, ids, -1).to_vector<float>(), lf::embedding(w, ids).to_vector<float>());
  if (GetParam()) {
    lf::test::StatsDelta d;
    lf::embedding(w, ids, std::nullopt, 0.5).to_vector<float>();
    EXPECT_EQ(d.launched(), 1u);
  }
  auto at_the_call = [](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no error for " << what;
    } catch (const lf::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("[20, 8]"), std::string::npos) << e.what();
    }
  };
  at_the_call([&] { lf::embedding(w, ids, 20); }, "lf::embedding: padding_idx 20 is out of range for 20 embeddings");
  at_the_call([&] { lf::embedding(lf::cast(w, DType::Int32), ids, std::nullopt, 1.0); },
              "lf::embedding: max_norm needs a floating-point weight");
}

TEST(IndexingFusion, GatherIsIndexMathInItsConsumersKernel) {
  Tensor w = lf::rand({50, 16});
  Tensor ids = ints({3, 49, 0, 7}, {4});
  w.to_vector<float>();  // materialized: the gather reads it from memory
  lf::test::StatsDelta d;
  // Embedding + layer_norm: the gather and the normalization in one row kernel.
  Tensor y = lf::layer_norm(lf::embedding(w, ids) * 2, 1);
  lf::test::Values ref = lf::test::reference_values(y);
  lf::test::Values got = lf::test::fused_values(y);
  EXPECT_EQ(d.launched(), 1u);
  EXPECT_TRUE(lf::test::compare(ref, got, lf::test::default_tolerance(DType::Float32, 16)).empty());
  // Ids of a batch of sequences ([B, T]): gathered in [B, T, D] itself, still one kernel.
  lf::test::StatsDelta d3;
  Tensor y2 = lf::layer_norm(lf::embedding(w, ints({3, 49, 0, 7, 49, 1}, {2, 3})), 1);
  lf::test::Values ref2 = lf::test::reference_values(y2);
  lf::test::Values got2 = lf::test::fused_values(y2);
  EXPECT_EQ(d3.launched(), 1u);
  EXPECT_TRUE(lf::test::compare(ref2, got2, lf::test::default_tolerance(DType::Float32, 16)).empty());
  // An index computed over the gather's shape joins it too: cast, gather and consumer in one kernel.
  lf::test::StatsDelta d2;
  Tensor g = lf::gather(w, 1, lf::cast(lf::from_vector(std::vector<float>(50 * 3, 15.f), {50, 3}) - 1, DType::Int32)) + 1;
  lf::test::Values gref = lf::test::reference_values(g);
  lf::test::Values ggot = lf::test::fused_values(g);
  EXPECT_EQ(d2.launched(), 1u);
  EXPECT_TRUE(lf::test::compare(gref, ggot, lf::test::default_tolerance(DType::Float32)).empty());
}

TEST(IndexingFusion, GatherOfAPendingSourceWritesItFirst) {
  Tensor x = lf::arange(0.0, 10) * 2;     // pending: written by its own kernel
  Tensor i = ints({9, 0}, {2});
  EXPECT_EQ(lf::index_select(x, 0, i).to_vector<float>(), (std::vector<float>{18, 0}));
  EXPECT_EQ(lf::index_select(lf::arange(0.0, 10), 0, i).to_vector<float>(), (std::vector<float>{9, 0}));  // a generator
}

// masked_scatter: the selected positions, in row-major order of the broadcast shape, take source's
// elements in order; a mask that selects more than source holds is an error at the sync point.
TEST_P(Indexing, MaskedScatterFillsSelectedPositionsInOrder) {
  FusionScope scope(GetParam());
  auto mask = [](std::vector<bool> v, lf::Shape s) { return lf::from_vector(v, std::move(s)); };
  Tensor src = floats({1, 2, 3, 4, 5}, {5});
  EXPECT_EQ(lf::masked_scatter(lf::zeros({2, 3}), mask({true, false, true, false, true, false}, {2, 3}), src)
                .to_vector<float>(),
            (std::vector<float>{1, 0, 2, 0, 3, 0}));
  // The mask broadcasts over x's rows; source of another shape.
  EXPECT_EQ(lf::masked_scatter(floats({9, 9, 9, 9, 9, 9}, {2, 3}), mask({true, false, true}, {3}), src.reshape({5, 1}))
                .to_vector<float>(),
            (std::vector<float>{1, 9, 2, 3, 9, 4}));
  // x broadcasts too; an empty source with nothing selected; no element selected.
  EXPECT_EQ(lf::masked_scatter(floats({7}, {1}), mask({false, true}, {2}), src).to_vector<float>(),
            (std::vector<float>{7, 1}));
  EXPECT_EQ(lf::masked_scatter(floats({7, 8}, {2}), mask({false, false}, {2}), lf::zeros({0})).to_vector<float>(),
            (std::vector<float>{7, 8}));
  try {
    lf::masked_scatter(lf::zeros({2, 3}), mask({true, true, true, false, false, false}, {2, 3}), floats({1, 2}, {2}))
        .to_vector<float>();
    ADD_FAILURE() << "no error for a short source";
  } catch (const lf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("lf::masked_scatter: the mask selects more elements than source has (2)"),
              std::string::npos)
        << e.what();
  }
  try {
    lf::masked_scatter(lf::zeros({2}), mask({true, false}, {2}), lf::zeros({0})).to_vector<float>();
    ADD_FAILURE() << "no error for an empty source";
  } catch (const lf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("source has (0)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(lf::masked_scatter(lf::zeros({2}), lf::zeros({2}), src), lf::Error);  // a float mask
  EXPECT_THROW(lf::masked_scatter(lf::zeros({2}), mask({true, false}, {2}), ints({1}, {1})), lf::Error);  // dtype
  // Every dtype, computed operands through a view, NaN and inf, against the reference.
  for (DType dt : {DType::Bool, DType::Int32, DType::Int64, DType::Float16, DType::BFloat16, DType::Float32,
                   DType::Float64}) {
    Tensor x = lf::cast((lf::rand({17, 6}) - 0.5) * 40, dt).transpose(0, 1);  // [6, 17], strided
    Tensor m = lf::rand({6, 17}) < 0.4f;
    Tensor source = lf::cast(lf::where(lf::rand({120}) < 0.1f, std::nan(""), lf::rand({120}) * 8), dt);
    lf::test::expect_matches_reference(lf::masked_scatter(x, m, source), 1, std::string("masked_scatter ") + lf::dtype_name(dt));
  }
}

TEST_P(Indexing, IndexOutOfRangeIsAnErrorAtTheSyncPoint) {
  FusionScope scope(GetParam());
  Tensor x = lf::arange(0.0, 6).reshape({2, 3});
  auto expect_error = [](const Tensor& t, const std::string& what) {
    try {
      t.to_vector<float>();
      ADD_FAILURE() << "no error for " << what;
    } catch (const lf::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  Tensor bad = lf::index_select(x * 1, 1, ints({0, 3}, {2}));  // recorded: no error yet
  expect_error(bad + 1, "lf::index_select: index 3 is out of range for dim 1 of size 3");
  expect_error(lf::gather(x, 0, ints({-3}, {1, 1})), "lf::gather: index -3 is out of range for dim 0 of size 2");
  expect_error(lf::take(x, ints({6}, {1})), "lf::take: index 6 is out of range for size 6");
  expect_error(lf::embedding(x, lf::cast(ints({2}, {1}) * 1, DType::Int32)), "lf::embedding: index 2");
  expect_error(lf::index_add(x, 0, ints({2}, {1}), lf::ones({1, 3})), "lf::index_add: index 2");
  // The trace stays usable after the error.
  EXPECT_EQ(lf::index_select(x, 1, ints({2}, {1})).to_vector<float>(), (std::vector<float>{2, 5}));
}

// Indices the host wrote itself carry their bound (rt::Storage::value_range): int32 and int64
// from_vector, a copy to another device, a .npy file. A gather of such indices in range reads no
// error word at the sync (cache_stats().index_checks); borrowed memory (from_blob), computed
// indices and host indices out of range are checked. Values match the reference either way.
TEST_P(Indexing, HostIndicesKnownInRangeAreNotChecked) {
  FusionScope scope(GetParam());
  const lf::Device device = lf::default_device();
  Tensor table = lf::arange(0.0, 24).reshape({6, 4}) * 1.5f;
  auto checks_of = [&](const Tensor& ids, const std::string& what) {
    const uint64_t before = lf::cache_stats().index_checks;
    lf::test::expect_matches_reference(lf::embedding(table, ids) + 1, 1, what);
    return lf::cache_stats().index_checks - before;
  };
  std::vector<int64_t> v{5, 0, -6, 2, -1};
  EXPECT_EQ(checks_of(ints(v, {5}), "int64"), 0u);
  EXPECT_EQ(checks_of(lf::from_vector(std::vector<int32_t>{5, 0, -6, 2}, {2, 2}), "int32"), 0u);
  EXPECT_EQ(checks_of(ints(v, {5}).to(lf::Device::cpu()).to(device), "copied"), 0u);
  const std::string path = ::testing::TempDir() + "lazyfuse_ids.npy";
  lf::save(path, ints(v, {5}));
  EXPECT_EQ(checks_of(lf::load(path).to(device), "npy"), 0u);
  std::remove(path.c_str());
  EXPECT_EQ(checks_of(lf::from_blob(v.data(), {5}, DType::Int64).to(device), "borrowed"), 1u);
  EXPECT_EQ(checks_of(ints(v, {5}) * 1, "computed"), 1u);
  // A pointer handed out into a view of host ids (a slice shares their storage) forgets the bound.
  Tensor ids = ints(v, {5}).to(device);
  lf::slice(ids, 0, 1, 3).data_ptr();
  EXPECT_EQ(checks_of(ids, "a slice handed out"), 1u);
  const uint64_t before = lf::cache_stats().index_checks;
  EXPECT_THROW((lf::embedding(table, ints({1, 6}, {2})) + 1).to_vector<float>(), lf::Error);
  EXPECT_EQ(lf::cache_stats().index_checks - before, 1u);
  // Host ids (unchecked) and computed ids out of range (checked) in one kernel: the error names
  // the checked gather, the op the user called.
  try {
    (lf::embedding(table, ints(v, {5})) + lf::index_select(table, 0, ints({0, 1, 2, 3, 6}, {5}) * 1)).to_vector<float>();
    ADD_FAILURE() << "no error for index_select's index 6";
  } catch (const lf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("lf::index_select: index 6 is out of range for dim 0 of size 6"),
              std::string::npos)
        << e.what();
  }
}

// The same for scatters: on a GPU, a scatter of host indices in range reads no error word back, so
// its flush does not wait for the device (cache_stats().index_checks counts the reads; the CPU
// checks as it scatters and reads nothing back either way). Computed indices are read back, and
// host indices out of range still give the error at the sync.
TEST_P(Indexing, ScattersOfHostIndicesKnownInRangeReadNothingBack) {
  FusionScope scope(GetParam());
  const uint64_t read = lf::default_device().is_cuda() ? 1 : 0;  // reads a checked scatter makes
  Tensor x = lf::arange(0.0, 12).reshape({4, 3}) * 0.5f;
  auto checks_of = [&](const Tensor& y, const std::string& what) {
    const uint64_t before = lf::cache_stats().index_checks;
    lf::test::expect_matches_reference(y + 1, 1, what);
    return lf::cache_stats().index_checks - before;
  };
  std::vector<int64_t> rows{3, 0, -4, 3, -1};
  Tensor src = lf::arange(0.0, 15).reshape({5, 3}) * 1.0f;
  EXPECT_EQ(checks_of(lf::index_add(x, 0, ints(rows, {5}), src), "index_add"), 0u);
  EXPECT_EQ(checks_of(lf::scatter_add(lf::zeros({6}), 0, ints({5, 0, 5, 1, -6}, {5}), lf::ones({5})), "scatter_add"), 0u);
  EXPECT_EQ(checks_of(lf::scatter(x, 1, ints({2, 0, 1, 0}, {4, 1}), lf::full({4, 1}, 7.0)), "scatter"), 0u);
  EXPECT_EQ(checks_of(lf::index_add(x, 0, ints(rows, {5}) * 1, src), "computed"), read);
  for (int64_t bad : {int64_t{4}, int64_t{-5}}) {  // past either end of dim 0's [-4, 4)
    const uint64_t before = lf::cache_stats().index_checks;
    EXPECT_THROW((lf::index_add(x, 0, ints({0, bad}, {2}), lf::ones({2, 3})) + 1).to_vector<float>(), lf::Error)
        << bad;
    EXPECT_EQ(lf::cache_stats().index_checks - before, read) << bad << ": out of the known range, checked";
  }
  // Replayed from a flush plan (the third sighting on): still nothing read back, new values each time.
  const uint64_t before = lf::cache_stats().index_checks;
  for (int it = 0; it < 4; ++it)
    lf::test::expect_matches_reference(
        lf::scatter_add(lf::zeros({6}), 0, ints({5, 0, it % 6, 1, -6}, {5}), lf::ones({5}) * float(it)) + 1, 1,
        "replay " + std::to_string(it));
  EXPECT_EQ(lf::cache_stats().index_checks - before, 0u);
}

TEST(IndexingErrors, BadArgumentsFailAtTheCall) {
  Tensor x = lf::zeros({2, 3});
  EXPECT_THROW(lf::index_select(x, 0, lf::zeros({2})), lf::Error);  // float indices
  EXPECT_THROW(lf::index_select(x, 2, ints({0}, {1})), lf::Error);
  EXPECT_THROW(lf::gather(x, 0, ints({0}, {1})), lf::Error);        // rank
  EXPECT_THROW(lf::gather(x, 0, ints({0, 0, 0, 0}, {1, 4})), lf::Error);  // larger off dim
  EXPECT_THROW(lf::embedding(lf::zeros({3}), ints({0}, {1})), lf::Error);
  EXPECT_THROW(lf::index_add(x, 0, ints({0}, {1}), lf::ones({2, 3})), lf::Error);
  EXPECT_THROW(lf::bincount(ints({-1}, {1})), lf::Error);
  EXPECT_THROW(lf::one_hot(ints({3}, {1}), 3), lf::Error);
  EXPECT_THROW(lf::masked_fill(x, lf::zeros({2, 3}), 1), lf::Error);
  EXPECT_THROW(lf::topk(x, 4), lf::Error);
  try {
    lf::index_select(x, 0, lf::zeros({2}));
  } catch (const lf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("lf::index_select: indices must be int32 or int64"), std::string::npos);
  }
}

}  // namespace
