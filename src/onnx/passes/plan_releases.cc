// plan_releases: the last pass. The nodes left become the rewritten graph's
// nodes in the order of their positions, the plan's results its outputs,
// and each value is dropped after its last reader (PlanReleases).
#include "onnx/passes/pass.h"

namespace singa::sonnx {

void PlanValueReleases(PassCtx& ctx) {
  Graph& g = ctx.graph;
  g.nodes.clear();
  for (auto& n : ctx.nodes)
    if (n) g.nodes.push_back(std::move(*n));
  ctx.nodes.clear();
  g.output_slots = ctx.result_slots;
  PlanReleases(g);
}

}  // namespace singa::sonnx
