#include "onnx/plan.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "onnx/passes/pass.h"
#include "singa/core/profile.h"
#include "singa/ops/tape.h"

namespace singa::sonnx {
namespace {

// What the build learns of each value slot, and whether the plan is dynamic.
struct BuildRun {
  ValueList values;
  std::vector<char> constant, shape_dynamic, folded;
  std::vector<Spec> specs;
  bool dynamic = false;
  // The parameters whose values a node's shape inference read (a Resize's
  // scales given as a float initializer): the plan holds while they do.
  std::vector<std::shared_ptr<Block>> params_read;
  // If nodes whose branches both replay plans and give results of the same
  // dtypes and shapes: the capture records a switch between them (their
  // results' specs) instead of walking. Keyed by the node's parsed
  // attributes, which are its own (names need not be unique) and which
  // the plan's rewritten graph shares.
  std::map<const void*, std::vector<Spec>> switches;
};

// An If node's branches.
std::optional<std::pair<const GraphAttr*, const GraphAttr*>> Branches(const Node& n) {
  if (!IsOnnx(n, "If")) return std::nullopt;
  const auto then_g = AttrOf<SubgraphPtr>(n, "then_branch");
  const auto else_g = AttrOf<SubgraphPtr>(n, "else_branch");
  const auto* t = then_g ? dynamic_cast<const GraphAttr*>(then_g->get()) : nullptr;
  const auto* e = else_g ? dynamic_cast<const GraphAttr*>(else_g->get()) : nullptr;
  if (!t || !e) return std::nullopt;
  return std::make_pair(t, e);
}

// The specs of an If node's results (`out`, from the branch its condition
// took) when both branches replay plans and the other branch, run on the
// same values, gives results of the same dtypes and shapes; nullopt else.
std::optional<std::vector<Spec>> SwitchSpecs(const Graph& g, const Node& node, const ValueList& in,
                                             const ValueList& out, const ValueList& values) {
  const auto branches = Branches(node);
  if (!branches || in.empty() || in[0].is_sequence() || !in[0].tensor().defined() ||
      in[0].tensor().dtype() != DType::kBool || in[0].tensor().numel() != 1)
    return std::nullopt;
  std::vector<Spec> specs;
  for (const Value& v : out) {
    if (v.is_sequence() || v.is_none()) return std::nullopt;
    specs.push_back({v.tensor().dtype(), v.tensor().shape()});
  }
  const bool took_then = in[0].tensor().Item<bool>();
  const GraphAttr& other = took_then ? *branches->second : *branches->first;
  // The branch not taken may not run on these values at all (a 2-D branch
  // given 3-D data): then the If is no switch.
  ValueList other_out;
  try {
    other_out = RunSubgraph(other, {}, g, values, g.Where(node));
  } catch (const Error&) {
    return std::nullopt;
  }
  if (other_out.size() < specs.size()) return std::nullopt;
  for (size_t k = 0; k < specs.size(); ++k)
    if (other_out[k].is_sequence() || other_out[k].is_none() ||
        Spec{other_out[k].tensor().dtype(), other_out[k].tensor().shape()} != specs[k])
      return std::nullopt;
  if (!SubgraphReplays(*branches->first, g, values) ||
      !SubgraphReplays(*branches->second, g, values))
    return std::nullopt;
  return specs;
}

// Records If node `node` (a switch of the build: SwitchSpecs) as one op
// that, on replay, runs the branch its condition picks through the
// branch's plan and copies the branch's results into the node's, of
// `specs`. The op reads the condition and every enclosing value the
// branches read, so the memory plan keeps them until it runs.
ValueList RecordSwitch(const std::shared_ptr<Graph>& graph, const Node& node, const ValueList& in,
                       const ValueList& values, const std::vector<Spec>& specs) {
  const Graph& g = *graph;
  const auto branches = Branches(node);
  TensorList outs, reads{in[0].tensor()};
  for (const Spec& s : specs) outs.emplace_back(s.shape, s.dtype, g.device);
  ValueList bound(values.size());
  for (const GraphAttr* branch : {branches->first, branches->second})
    for (int s : branch->outer()) {
      bound[s] = values[s];
      if (!values[s].is_sequence() && values[s].tensor().defined())
        reads.push_back(values[s].tensor());
    }
  g.device.Exec(
      [graph, then_branch = branches->first, else_branch = branches->second, cond = in[0].tensor(),
       bound, outs, where = g.Where(node)]() mutable {
        const GraphAttr& taken = cond.Item<bool>() ? *then_branch : *else_branch;
        const ValueList r = RunSubgraph(taken, {}, *graph, bound, where);
        for (size_t k = 0; k < outs.size(); ++k) {
          const bool same = k < r.size() && !r[k].is_sequence() && r[k].tensor().defined() &&
                            r[k].tensor().dtype() == outs[k].dtype() &&
                            r[k].tensor().shape() == outs[k].shape();
          SINGA_CHECK(same, ShapeError,
                      where << ": the branch taken gives result " << k << " as "
                            << (k < r.size() ? r[k].ToString() : std::string("nothing"))
                            << ", where the plan holds " << outs[k].ToString());
          outs[k].CopyFrom(r[k].tensor());
        }
      },
      reads, outs);
  return ValueList(outs.begin(), outs.end());
}

// The build run over nodes [0, end) of `g`, from `values` (constants and
// inputs bound). A node whose inputs are all constant runs (its results
// fold unless it is random), as do Shape and Size. With `shapes_only` every
// other node only infers its results' dtypes and shapes, which get
// placeholders of uninitialized memory; it gives up (nullopt) at a node
// that needs computed data to know them: shape inference reading a
// non-constant value, an op that runs on values (control flow, sequences,
// optionals), or a sequence or optional input.
// Otherwise every node runs.
std::optional<BuildRun> RunBuild(const Graph& g, ValueList values, int end,
                                 const std::vector<int>& result_slots, bool shapes_only) {
  const size_t n_slots = values.size();
  BuildRun b;
  std::vector<char> keep(n_slots, 0);
  b.constant.assign(n_slots, 0);
  b.shape_dynamic.assign(n_slots, 0);
  b.folded.assign(n_slots, 0);
  b.specs.resize(n_slots);
  for (int s : result_slots) keep[s] = 1;
  auto spec = [&](int s) {
    if (!values[s].is_sequence() && !values[s].is_none())
      b.specs[s] = {values[s].tensor().dtype(), values[s].tensor().shape()};
  };
  // Parameters are constants that training changes: only the others fold.
  for (size_t s = 0; s < n_slots; ++s) {
    b.constant[s] = g.constants[s].defined() && !g.constants[s].stores_grad();
    spec(static_cast<int>(s));
  }
  for (int s : g.input_slots) b.dynamic |= values[s].is_sequence() || values[s].is_none();
  if (shapes_only && b.dynamic) return std::nullopt;

  ValueReads reads;  // the inputs whose values a node's shape inference read
  ValueList in;
  for (int i = 0; i < end; ++i) {
    const Node& node = g.nodes[i];
    in.clear();
    for (int s : node.inputs) in.push_back(s >= 0 ? values[s] : Value());
    const bool reads_shape_only = IsOnnx(node, "Shape") || IsOnnx(node, "Size");
    const bool inputs_constant = std::all_of(node.inputs.begin(), node.inputs.end(),
                                             [&](int s) { return s < 0 || b.constant[s]; });
    const bool infer_only = shapes_only && !inputs_constant && !reads_shape_only;
    if (infer_only && (node.on_values || std::any_of(in.begin(), in.end(), [](const Value& v) {
                         return v.is_sequence();
                       })))
      return std::nullopt;
    reads.blocks.clear();
    ValueList out;
    SpecList inferred;
    if (infer_only) {
      TensorList tensors;
      for (const Value& v : in) tensors.push_back(v.is_none() ? Tensor() : v.tensor());
      // Inference that fails may have read a placeholder: the full build
      // run tells.
      try {
        inferred = node.schema->Infer(tensors, node.attrs.get(),
                                      static_cast<int>(node.outputs.size()), node.name, &reads);
      } catch (const Error&) {
        return std::nullopt;
      }
    } else {
      out = RunNode(g, node, in, values, &reads);
    }
    bool node_dynamic = node.on_values, any_shape_dynamic = false;
    if (node.on_values && !infer_only) {
      if (auto specs = SwitchSpecs(g, node, in, out, values)) {
        b.switches[node.attrs.get()] = std::move(*specs);
        node_dynamic = false;
      }
    }
    bool all_constant = !node.on_values && !node.schema->nondeterministic;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int s = node.inputs[k];
      if (s < 0) continue;
      any_shape_dynamic |= b.shape_dynamic[s];
      if (b.constant[s]) continue;
      all_constant = false;
      if (in[k].is_sequence()) continue;
      std::shared_ptr<Block> blk = internal::BlockOf(in[k].tensor());
      if (std::find(reads.blocks.begin(), reads.blocks.end(), blk.get()) == reads.blocks.end())
        continue;
      if (g.constants[s].defined())
        b.params_read.push_back(std::move(blk));
      else
        node_dynamic = true;
    }
    if (infer_only) {
      if (node_dynamic) return std::nullopt;  // its shapes came from a placeholder's bytes
      for (const TensorSpec& o : inferred) out.emplace_back(Tensor(o.shape, o.dtype, g.device));
    }
    // A shape is constant for a signature unless a dynamic node made it.
    if (reads_shape_only && node.inputs[0] >= 0) all_constant = !b.shape_dynamic[node.inputs[0]];
    b.dynamic |= node_dynamic && !all_constant;
    for (size_t k = 0; k < node.outputs.size() && k < out.size(); ++k) {
      const int s = node.outputs[k];
      if (s < 0) continue;
      values[s] = std::move(out[k]);
      spec(s);
      b.constant[s] = b.folded[s] = all_constant;
      b.shape_dynamic[s] = node_dynamic || any_shape_dynamic;
    }
    for (int s : g.release_after[i])
      if (!keep[s] && !b.constant[s]) values[s] = Value();
  }
  b.values = std::move(values);
  return b;
}

}  // namespace

// NOTE: a static model builds its plan from inferred shapes alone and gets
// its first results from the plan's first replay: running every node of the
// original graph as well (unfused Conv, BatchNormalization and activation,
// each result freshly allocated) made MobileNet-V2's first run at batch 1
// take 4x its later runs.
Plan::Plan(const Graph& g, ValueList values, int end, const std::vector<int>& result_slots,
           SharedArena& arena, ValueList& first) {
  ValueList inputs;
  for (int s : g.input_slots) inputs.push_back(values[s]);
  const auto input_tensors = [&] {
    TensorList t;
    for (const Value& v : inputs) t.push_back(v.tensor());
    return t;
  };
  const bool capture = !g.device.graph_enabled();
  // The build run's temporaries go back to the OS as they die: cached, they
  // would stay beside the replay's arena in size classes it never asks for
  // (MobileNet-V2 at batch 8: peak RSS 382 MiB with caching, 221 without).
  // The cache stays: the arena and packed weights of a model prepared and
  // dropped before are pages this build's can reuse (turning caching off
  // emptied it, and DBNet's first run in a new prepare faulted in 17 MB more).
  MemPool::TemporariesScope temporaries(g.device.mem_pool());
  std::optional<BuildRun> b;
  if (capture) b = RunBuild(g, values, end, result_slots, true);
  auto depend = [&] {
    for (const std::shared_ptr<Block>& blk : b->params_read)
      deps_.emplace_back(blk, blk->version());
  };
  if (b) {
    depend();
    Rewrite(g, end, b->values, b->specs, b->folded, result_slots);
    b.reset();
    Capture(input_tensors(), arena);
    first = Run(inputs);
    return;
  }
  b = RunBuild(g, std::move(values), end, result_slots, false);
  depend();
  for (int s : result_slots) first.push_back(b->values[s]);
  Rewrite(g, end, b->values, b->specs, b->folded, result_slots);
  switches_ = std::move(b->switches);
  if (!b->dynamic && capture) Capture(input_tensors(), arena);
}

std::span<const Pass> PlanPasses() {
  static constexpr Pass kPasses[] = {
      {"fold_constants", FoldConstants},
      {"fold_batch_norm", FoldBatchNorm},
      {"fuse_conv_epilogue", FuseConvEpilogue, true},
      {"fuse_gemm_activation", FuseGemmActivation, true},
      {"choose_layouts", ChooseLayouts, true},
      {"fuse_elementwise", FuseElementwise, true},
      {"plan_releases", PlanValueReleases},
  };
  return kPasses;
}

void Plan::Rewrite(const Graph& g, int end, const ValueList& values, const std::vector<Spec>& specs,
                   const std::vector<char>& folded, const std::vector<int>& result_slots) {
  graph_ = std::make_shared<Graph>(g);
  graph_->nodes.clear();
  PassCtx ctx{g, *graph_, {}, values, specs, folded, result_slots, deps_};
  ctx.nodes.assign(g.nodes.begin(), g.nodes.begin() + end);
  for (const Pass& pass : PlanPasses())
    if (!pass.cpu_only || g.device.type == DeviceType::kCpu) pass.run(ctx);
}

void Plan::Capture(const TensorList& inputs, SharedArena& arena) {
  Graph& g = *graph_;
  const Device dev = g.device;
  // The inputs' placeholders go in the arena (a run copies its inputs in
  // first): each kept plan held its own, as large as the input (0.7 MiB a
  // plan for a text-direction classifier at batch 6).
  for (const Tensor& x : inputs) inputs_.emplace_back(x.shape(), x.dtype(), dev);
  ValueList values = ConstantValues(g);
  for (size_t i = 0; i < inputs_.size(); ++i) values[g.input_slots[i]] = inputs_[i];
  // Where each node's ops end and what it reads, for profiles.
  NodeHook bounds{
      [&](int, const ValueList& in) {
        std::vector<std::string> shapes;
        for (const Value& v : in) shapes.push_back(v.ToString());
        node_inputs_.push_back(std::move(shapes));
      },
      [&, base = dev.graph_size()](int) { node_ends_.push_back(dev.graph_size() - base); },
      [&](int i, const ValueList& in) -> std::optional<ValueList> {
        auto it = switches_.find(g.nodes[i].attrs.get());
        if (it == switches_.end()) return std::nullopt;
        return RecordSwitch(graph_, g.nodes[i], in, values, it->second);
      }};
  // An op that cannot be recorded, or a result that is a sequence: the
  // plan walks the nodes instead.
  const auto walk = [&] {
    dev.EnableGraph(false);
    dev.ResetGraph();
    inputs_.clear();
    node_ends_.clear();
    node_inputs_.clear();
  };
  dev.EnableGraph(true);
  try {
    Execute(g, values, static_cast<int>(g.nodes.size()), {}, &bounds);
  } catch (const Error&) {
    return walk();
  }
  for (int s : g.output_slots)
    if (values[s].is_sequence()) return walk();
  dev.EnableGraph(false);
  for (int s : g.output_slots) results_.push_back(values[s].tensor());
  if (dev.PlanGraphMemory(results_, &arena, inputs_, &placement_) > 0) arena_ = arena;
  ops_ = dev.runtime().TakeGraph();
  if (ops_.empty()) return inputs_.clear(), results_.clear();
  std::unordered_set<const Block*> written;
  for (const DeviceRuntime::Op& op : ops_)
    for (const auto& b : op.writes) written.insert(b.get());
  std::unordered_map<const Block*, int> uses;
  for (const Tensor& r : results_) ++uses[r.block().get()];
  for (const Tensor& r : results_) {
    const Block* b = r.block().get();
    handed_.push_back(dev.type == DeviceType::kCpu && r.numel() > 0 && r.is_contiguous() &&
                      r.dtype() != DType::kString && written.count(b) && uses[b] == 1);
  }
  for (const Tensor& x : inputs_) {
    const Block* b = x.block().get();
    const auto at = std::find_if(placement_.begin(), placement_.end(),
                                 [&](const auto& p) { return p.first == b; });
    const bool lend = dev.type == DeviceType::kCpu && x.dtype() != DType::kString &&
                      !written.count(b) && at != placement_.end();
    lent_at_.push_back(lend ? static_cast<int64_t>(at->second) : -1);
  }
}

void Plan::MoveTo(const SharedArena& arena) {
  SINGA_CHECK(arena.bytes >= arena_.bytes, Error, "Plan::MoveTo: the arena is too small");
  for (auto [block, offset] : placement_)
    block->Move(static_cast<char*>(arena.memory.get()) + offset, arena.memory);
  arena_ = arena;
}

std::vector<std::string> Plan::op_types() const {
  std::vector<std::string> v;
  for (const Node& n : graph_->nodes) v.push_back(n.op_type);
  return v;
}

bool Plan::fresh() const {
  for (const auto& [block, version] : deps_) {
    auto b = block.lock();
    if (!b || b->version() != version) return false;
  }
  return true;
}

ValueList Plan::Run(const ValueList& inputs, std::vector<NodeProfile>* profile) {
  const Graph& g = *graph_;
  ValueList out;
  if (captured()) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    // Contiguous inputs are read where they lie; their placeholders go back
    // to the arena when the run ends, also when an op throws (one that was
    // copied into instead is moved onto its own place: nothing changes).
    struct Lent {
      const Plan& plan;
      ~Lent() {
        for (size_t i = 0; i < plan.inputs_.size(); ++i)
          if (plan.lent_at_[i] >= 0)
            plan.inputs_[i].block()->Move(
                static_cast<char*>(plan.arena_.memory.get()) + plan.lent_at_[i],
                plan.arena_.memory);
      }
    } lent{*this};
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& x = inputs[i].tensor();
      if (lent_at_[i] >= 0 && x.is_contiguous() && x.numel() > 0)
        inputs_[i].block()->Move(x.raw_data(), nullptr);
      else
        inputs_[i].CopyFrom(x);
    }
    if (!profile) {
      DeviceRuntime::Replay(ops_);
    } else {
      // The recording replayed node by node, each timed; on a GPU, from the
      // node before being done to the node's kernels being done.
      const Device dev = results_.empty() ? Device::Cpu() : results_[0].device();
      auto done = [&dev] {
        if (dev.type == DeviceType::kCuda) dev.Sync();
      };
      size_t op = 0;
      for (size_t n = 0; n < node_ends_.size(); ++n) {
        const Node& node = g.nodes[n];
        NodeProfile p{node.op_type, node.name, node_inputs_[n]};
        KernelLog kernels;
        done();
        const auto t0 = Clock::now();
        for (; op < node_ends_[n]; ++op) {
          ops_[op].fn();
          for (const auto& b : ops_[op].writes)
            if (b) b->Touch();
        }
        done();
        const auto t1 = Clock::now();
        p.start_us = std::chrono::duration<double, std::micro>(t0 - start).count();
        p.duration_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
        p.kernels = kernels.names();
        profile->push_back(std::move(p));
      }
    }
    for (size_t i = 0; i < results_.size(); ++i) {
      const Tensor& r = results_[i];
      if (!handed_[i]) {
        out.push_back(r.Clone());
        continue;
      }
      const std::shared_ptr<Block> taken = r.block()->TakeMemory();
      out.push_back(Tensor::Wrap(static_cast<char*>(taken->data()) + r.offset() * r.itemsize(),
                                 r.dtype(), r.shape(), r.strides(), taken, r.device()));
    }
    return out;
  }
  if (walk_values_.size() != g.constants.size()) walk_values_ = ConstantValues(g);
  ValueList& values = walk_values_;
  // Back to the constants alone (which no run releases or writes), also
  // when a node throws: nothing a run computed stays alive until the next.
  struct Restore {
    const Graph& g;
    ValueList& values;
    ~Restore() {
      for (size_t s = 0; s < values.size(); ++s)
        if (!g.constants[s].defined()) values[s] = Value();
    }
  } restore{g, values};
  for (size_t i = 0; i < inputs.size(); ++i) values[g.input_slots[i]] = inputs[i];
  std::optional<NodeTimer> timer;
  if (profile) timer.emplace(g, *profile);
  Execute(g, values, static_cast<int>(g.nodes.size()), {}, timer ? &timer->hook() : nullptr);
  for (int s : g.output_slots) out.push_back(values[s]);
  return out;
}

}  // namespace singa::sonnx
