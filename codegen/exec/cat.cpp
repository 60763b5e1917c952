// cat: each input copied by a generated kernel straight into its slab of the output (a view of the
// output storage), on the output's device; the inputs are read through their views.
#include "codegen/exec/groups.h"

#include "codegen/exec/replay.h"
#include "codegen/ir/view.h"

namespace lf::exec {

bool run_cat(const backend::GroupRun& run, Recorder* rec) {
  ir::Node* n = run.group.nodes[0];
  ir::Inputs inputs = n->inputs;
  for (const ir::NodePtr& in : inputs)
    if (!ir::resolve_views(in.get()).first->realized()) return false;
  auto storage = rt::Storage::allocate(n->device, static_cast<size_t>(n->numel()) * dtype_size(n->dtype));
  Shape strides = ir::contiguous_strides(n->shape);
  int64_t axis = n->attrs.axis, at = 0;
  std::vector<backend::Prepared> copies;
  for (const ir::NodePtr& in : inputs) {
    int64_t extent = in->shape[static_cast<size_t>(axis)];
    if (in->numel() > 0) {
      ir::NodePtr copy = ir::make_node(ir::Op::Copy, n->dtype, n->device, Shape(in->shape), {in});
      fuse::Group cg;
      cg.full = in->shape;
      cg.nodes = {copy.get()};
      cg.outputs = {copy.get()};
      fuse::Partition cp;
      cp.group_of[copy.get()] = run.index;
      std::vector<lower::OutputPlacement> place{{storage, at * strides[static_cast<size_t>(axis)], strides}};
      backend::GroupRun copy_run{cg, cp, run.index, run.options, run.stats};
      backend::Prepared k = backend::prepare(copy_run, cg, {.placement = &place});
      if (!k.entry->kernel) return false;
      copies.push_back(std::move(k));
    }
    at += extent;
  }
  for (const backend::Prepared& k : copies) backend::launch(k, run.stats);
  backend::materialize(*n, storage, ir::Layout{strides, 0});
  if (rec && rec->ok) rec->add_cat(*n, copies);
  return true;
}

}  // namespace lf::exec
