// fold_constants: the values the build run found constant for the plan's
// signature (computed from non-parameter constants and shapes only, by
// deterministic ops) become constants of the rewritten graph, and the nodes
// that computed them are removed. A node stays when one of its outputs was
// not folded (random ops, results of data) or when it has no outputs.
#include <algorithm>

#include "onnx/passes/pass.h"

namespace singa::sonnx {

void FoldConstants(PassCtx& ctx) {
  for (size_t s = 0; s < ctx.values.size(); ++s)
    if (ctx.folded[s]) ctx.graph.constants[s] = ctx.values[s].tensor();
  for (auto& n : ctx.nodes) {
    if (!n) continue;
    const bool all_folded = std::all_of(n->outputs.begin(), n->outputs.end(),
                                        [&](int s) { return s < 0 || ctx.folded[s]; });
    if (all_folded && !n->outputs.empty()) n.reset();
  }
}

}  // namespace singa::sonnx
