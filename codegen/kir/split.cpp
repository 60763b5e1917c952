// Which row kernels split a long row over threads, and how (see SplitInfo in split.h): an
// analysis of the kernel IR alone, shared by the emitter and the launcher.
#include <algorithm>
#include <functional>
#include <vector>

#include "codegen/kir/split.h"

namespace lf::kir {


SplitInfo split_info(const Kernel& k) {
  SplitInfo s;
  size_t n = k.instrs.size();
  s.level.assign(n, -1);
  s.slot.assign(n, -1);
  if (!k.row) return s;
  for (const Output& o : k.outputs)
    if (!k.instrs[static_cast<size_t>(o.instr)].row) return s;  // element outputs need the whole row
  // A reduction's level is one more than the highest level among the reductions its element
  // values depend on (through row values): var's second sum waits for the mean.
  std::function<int(int)> level = [&](int i) -> int {
    if (s.level[static_cast<size_t>(i)] >= 0) return s.level[static_cast<size_t>(i)];
    int l = 0;
    std::vector<int> stack{k.instrs[static_cast<size_t>(i)].args[0]};
    std::vector<bool> seen(n, false);
    while (!stack.empty()) {
      int j = stack.back();
      stack.pop_back();
      if (seen[static_cast<size_t>(j)]) continue;
      seen[static_cast<size_t>(j)] = true;
      const Instr& in = k.instrs[static_cast<size_t>(j)];
      if (in.kind == InstrKind::Reduce) {
        l = std::max(l, level(j) + 1);
        continue;
      }
      for (int a : in.args) stack.push_back(a);
    }
    return s.level[static_cast<size_t>(i)] = l;
  };
  for (size_t i = 0; i < n; ++i) {
    if (k.instrs[i].kind != InstrKind::Reduce) continue;
    s.slot[i] = s.reductions++;
    s.levels = std::max(s.levels, level(static_cast<int>(i)) + 1);
  }
  s.splittable = s.reductions > 0;
  return s;
}

}  // namespace lf::kir
