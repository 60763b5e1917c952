// For the numpy ctest (tests/tools/numpy_interop.py): loads every .npy and .npz file named on the
// command line, transforms each tensor (numbers doubled, bools negated) and writes it to OUT_DIR
// under the same name, .npz archives as .npz.
#include <cstdio>
#include <string>

#include <lazyfuse/lazyfuse.h>

namespace {
lf::Tensor transform(const lf::Tensor& t) { return t.dtype() == lf::DType::Bool ? !t : t * 2; }
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR FILE.npy|FILE.npz...\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  try {
    for (int i = 2; i < argc; ++i) {
      const std::string in = argv[i];
      const std::string name = in.substr(in.find_last_of('/') + 1);
      if (name.size() > 4 && name.substr(name.size() - 4) == ".npz") {
        std::map<std::string, lf::Tensor> all = lf::load_npz(in);
        for (auto& [key, t] : all) t = transform(t);
        lf::savez(out + "/" + name, all);
      } else {
        lf::save(out + "/" + name, transform(lf::load(in)));
      }
    }
  } catch (const lf::Error& e) {
    std::fprintf(stderr, "npy_roundtrip: %s\n", e.what());
    return 1;
  }
  return 0;
}
