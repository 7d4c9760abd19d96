#include "onnx/plan.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string_view>

#include "singa/ops/tape.h"

namespace singa::sonnx {
namespace {

// Ops whose results must be recomputed on every run even from constant
// inputs.
bool Nondeterministic(const Node& n) {
  static const std::set<std::string, std::less<>> kOps = {
      "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
      "Multinomial",  "Bernoulli",     "Dropout"};
  return kOps.count(n.op_type) > 0;
}

// Scoped installation of the log of values read by shape inference.
class ValueReadLogScope {
 public:
  explicit ValueReadLogScope(internal::ValueReads* log) : was_(internal::t_value_read_log) {
    internal::t_value_read_log = log;
  }
  ~ValueReadLogScope() { internal::t_value_read_log = was_; }
  ValueReadLogScope(const ValueReadLogScope&) = delete;
  ValueReadLogScope& operator=(const ValueReadLogScope&) = delete;

 private:
  internal::ValueReads* was_;
};

template <class T>
std::optional<T> AttrOf(const Node& n, std::string_view name) {
  if (!n.schema->dump) return std::nullopt;
  const AttrMap m = n.schema->dump(n.attrs.get());
  auto it = m.find(name);
  if (it == m.end() || !std::holds_alternative<T>(it->second)) return std::nullopt;
  return std::get<T>(it->second);
}

bool IsOnnx(const Node& n, std::string_view op) {
  return n.schema && n.op_type == op && CanonicalDomain(n.domain).empty();
}

// Turns a pool's caching off for a scope (which also empties its cache),
// then restores it.
class NoCachingScope {
 public:
  explicit NoCachingScope(MemPool& pool) : pool_(pool), was_(pool.caching()) {
    pool_.set_caching(false);
  }
  ~NoCachingScope() { pool_.set_caching(was_); }
  NoCachingScope(const NoCachingScope&) = delete;
  NoCachingScope& operator=(const NoCachingScope&) = delete;

 private:
  MemPool& pool_;
  bool was_;
};

// What the build learns of each value slot, and whether the plan is dynamic.
struct BuildRun {
  ValueList values;
  std::vector<char> constant, shape_dynamic, folded;
  std::vector<Spec> specs;
  bool dynamic = false;
};

// The build run over nodes [0, end) of `g`, from `values` (constants and
// inputs bound). A node whose inputs are all constant runs (its results
// fold unless it is random), as do Shape and Size. With `shapes_only` every
// other node only infers its results' dtypes and shapes, which get
// placeholders of uninitialized memory; it gives up (nullopt) at a node
// that needs computed data to know them: shape inference reading a
// non-constant value, control flow, a value op, a sequence or optional.
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

  internal::ValueReads reads;
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
    {
      ValueReadLogScope log(&reads);
      if (infer_only) {
        TensorList tensors;
        for (const Value& v : in) tensors.push_back(v.is_none() ? Tensor() : v.tensor());
        // Inference that fails may have read a placeholder: the full build
        // run tells.
        try {
          inferred = node.schema->Infer(tensors, node.attrs.get(),
                                        static_cast<int>(node.outputs.size()), node.name);
        } catch (const Error&) {
          return std::nullopt;
        }
      } else {
        out = RunNode(g, node, in, values);
      }
    }
    bool node_dynamic = node.on_values, any_shape_dynamic = false;
    bool all_constant = !node.on_values && !Nondeterministic(node);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const int s = node.inputs[k];
      if (s < 0) continue;
      any_shape_dynamic |= b.shape_dynamic[s];
      if (b.constant[s]) continue;
      all_constant = false;
      if (in[k].is_sequence()) continue;
      const Block* blk = internal::BlockOf(in[k].tensor()).get();
      node_dynamic |=
          std::find(reads.blocks.begin(), reads.blocks.end(), blk) != reads.blocks.end();
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
           ValueList& first) {
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
  NoCachingScope no_caching(g.device.mem_pool());
  std::optional<BuildRun> b;
  if (capture) b = RunBuild(g, values, end, result_slots, true);
  if (b) {
    Rewrite(g, end, b->values, b->specs, b->folded, result_slots);
    b.reset();
    Capture(input_tensors());
    first = Run(inputs);
    return;
  }
  b = RunBuild(g, std::move(values), end, result_slots, false);
  for (int s : result_slots) first.push_back(b->values[s]);
  Rewrite(g, end, b->values, b->specs, b->folded, result_slots);
  if (!b->dynamic && capture) Capture(input_tensors());
}

void Plan::Rewrite(const Graph& g, int end, const ValueList& values, const std::vector<Spec>& specs,
                   const std::vector<char>& folded, const std::vector<int>& result_slots) {
  graph_ = std::make_shared<Graph>(g);
  Graph& rg = *graph_;
  rg.nodes.clear();
  for (size_t s = 0; s < values.size(); ++s)
    if (folded[s]) rg.constants[s] = values[s].tensor();

  // Readers of each value among the nodes that still run; results and
  // subgraphs count as readers that cannot be fused.
  const size_t n_slots = values.size();
  std::vector<int> readers(n_slots, 0), reader(n_slots, -1);
  std::vector<std::optional<Node>> nodes(end);
  for (int i = 0; i < end; ++i) {
    const Node& n = g.nodes[i];
    const bool all_folded =
        std::all_of(n.outputs.begin(), n.outputs.end(), [&](int s) { return s < 0 || folded[s]; });
    if (all_folded && !n.outputs.empty()) continue;
    nodes[i] = n;
    for (int s : n.inputs)
      if (s >= 0) ++readers[s], reader[s] = i;
    for (int s : n.outer_inputs) ++readers[s], reader[s] = -1;
  }
  for (int s : g.output_slots) ++readers[s], reader[s] = -1;
  for (int s : result_slots) ++readers[s], reader[s] = -1;

  auto add_constant = [&](const std::string& name, Tensor t) {
    rg.slot_names.push_back(name);
    rg.constants.push_back(std::move(t));
    rg.producer.push_back(-1);
    return static_cast<int>(rg.constants.size()) - 1;
  };
  auto is_param = [&](int s) { return s >= 0 && g.constants[s].defined(); };
  const OpSchema& fused_schema = OpRegistry::Get("FusedConv", kLatestOpset, "ai.singa");

  // Folds BatchNormalization `bn` (inference) into Conv `conv`'s weights.
  auto fold_bn = [&](Node& conv, const Node& bn) {
    if (bn.inputs.size() != 5 || !is_param(conv.inputs[1])) return false;
    if (conv.inputs.size() > 2 && conv.inputs[2] >= 0 && !is_param(conv.inputs[2])) return false;
    for (int k = 1; k < 5; ++k)
      if (!is_param(bn.inputs[k])) return false;
    for (size_t k = 1; k < bn.outputs.size(); ++k)
      if (bn.outputs[k] >= 0) return false;
    if (AttrOf<int64_t>(bn, "training_mode").value_or(0) != 0) return false;
    if (AttrOf<int64_t>(bn, "spatial").value_or(1) != 1) return false;
    const Tensor& w = g.constants[conv.inputs[1]];
    const Tensor b =
        conv.inputs.size() > 2 && conv.inputs[2] >= 0 ? g.constants[conv.inputs[2]] : Tensor();
    const Tensor &scale = g.constants[bn.inputs[1]], &bias = g.constants[bn.inputs[2]],
                 &mean = g.constants[bn.inputs[3]], &var = g.constants[bn.inputs[4]];
    for (const Tensor* t : {&w, &b, &scale, &bias, &mean, &var})
      if (t->defined() && t->dtype() != DType::kFloat32) return false;
    if (scale.ndim() != 1 || scale.dim(0) != w.dim(0)) return false;
    const float eps = AttrOf<float>(bn, "epsilon").value_or(1e-5f);
    // s = scale / sqrt(var + eps); W' = W * s (per output channel);
    // b' = (b - mean) * s + bias.
    Tensor s = CallOp(
        "Div",
        {scale, CallOp("Sqrt", {CallOp("Add", {var, Tensor::Scalar(eps, rg.device)})[0]})[0]})[0];
    Shape per_channel(w.ndim(), 1);
    per_channel[0] = w.dim(0);
    Tensor w2 = CallOp("Mul", {w, s.Reshape(per_channel)})[0];
    Tensor centered = b.defined() ? CallOp("Sub", {b, mean})[0] : CallOp("Neg", {mean})[0];
    Tensor b2 = CallOp("Add", {CallOp("Mul", {centered, s})[0], bias})[0];
    for (const Tensor* t : {&w, &b, &scale, &bias, &mean, &var})
      if (t->defined()) {
        auto block = internal::BlockOf(*t);
        deps_.emplace_back(block, block->version());
      }
    const std::string& out_name = rg.slot_names[bn.outputs[0]];
    conv.inputs = {conv.inputs[0], add_constant(out_name + ":folded_W", std::move(w2)),
                   add_constant(out_name + ":folded_B", std::move(b2))};
    conv.outputs = {bn.outputs[0]};
    return true;
  };

  // Makes `conv` a FusedConv with Z and/or an activation.
  auto fuse = [&](Node& conv, int z, const std::string& act, float alpha, float beta) {
    AttrMap m = conv.schema->dump(conv.attrs.get());
    if (z >= 0) {
      conv.inputs.resize(3, -1);
      conv.inputs.push_back(z);
    }
    if (!act.empty()) {
      m["activation"] = act;
      m["alpha"] = alpha;
      m["beta"] = beta;
    }
    conv.op_type = "FusedConv";
    conv.domain = "ai.singa";
    conv.schema = &fused_schema;
    conv.attrs = fused_schema.ParseAttrs(m, {}, conv.name);
  };
  auto float_at = [&](int s, float fallback) {
    return s >= 0 && rg.constants[s].defined()
               ? rg.constants[s].AsType(DType::kFloat32).Item<float>()
               : fallback;
  };

  for (int i = 0; i < end; ++i) {
    if (!nodes[i] || !IsOnnx(*nodes[i], "Conv") || nodes[i]->outputs.size() != 1) continue;
    Node conv = *nodes[i];
    int at = i;
    const DType dt = specs[conv.outputs[0] < 0 ? conv.inputs[0] : conv.outputs[0]].dtype;
    if (dt != DType::kFloat32) continue;
    bool has_z = false;
    while (true) {
      const int s = conv.outputs[0];
      if (s < 0 || readers[s] != 1 || reader[s] < 0 || !nodes[reader[s]]) break;
      const int r = reader[s];
      Node& next = *nodes[r];
      if (IsOnnx(next, "BatchNormalization") && conv.op_type == "Conv" && next.inputs[0] == s) {
        if (!fold_bn(conv, next)) break;
        nodes[r].reset();
        continue;
      }
      if (IsOnnx(next, "Add") && !has_z && conv.op_type == "Conv" && next.inputs.size() == 2) {
        const int z = next.inputs[0] == s ? next.inputs[1] : next.inputs[0];
        if (z == s || z < 0 || specs[z].dtype != dt || specs[z] != specs[s]) break;
        fuse(conv, z, "", 0, 0);
        has_z = true;
      } else if (IsOnnx(next, "Relu")) {
        fuse(conv, -1, "Relu", 0, 0);
      } else if (IsOnnx(next, "LeakyRelu")) {
        fuse(conv, -1, "LeakyRelu", AttrOf<float>(next, "alpha").value_or(0.01f), 0);
      } else if (IsOnnx(next, "Clip")) {
        float lo = AttrOf<float>(next, "min").value_or(-INFINITY),
              hi = AttrOf<float>(next, "max").value_or(INFINITY);
        if (next.inputs.size() > 1) lo = float_at(next.inputs[1], lo);
        if (next.inputs.size() > 2) hi = float_at(next.inputs[2], hi);
        if ((next.inputs.size() > 1 && next.inputs[1] >= 0 &&
             !rg.constants[next.inputs[1]].defined()) ||
            (next.inputs.size() > 2 && next.inputs[2] >= 0 &&
             !rg.constants[next.inputs[2]].defined()))
          break;
        fuse(conv, -1, "Clip", lo, hi);
      } else {
        break;
      }
      // The fused node runs where the node it absorbed ran (its other
      // inputs are ready there).
      conv.outputs = next.outputs;
      nodes[at].reset();
      at = r;
      nodes[at].reset();
      if (conv.domain == "ai.singa" && !AttrOf<std::string>(conv, "activation")->empty()) break;
    }
    nodes[at] = std::move(conv);
  }

  // Activations between convolutions stay in oneDNN's channel-blocked layout
  // (FusedConv's `blocked`) instead of being reordered to NCHW and back at
  // every layer: nChw<B>c when a value's channels are a multiple of the CPU's
  // channel block B (16 or 8, see dnnl_util::ChannelBlock), channels-last
  // (nhwc) otherwise. A value qualifies when a 2-D float32 convolution makes
  // it and only convolutions read it: as X, or as Z where their own result is
  // blocked too. Results, graph outputs and subgraph inputs stay NCHW.
  auto is_conv = [](const Node& n) {
    return IsOnnx(n, "Conv") || (n.domain == "ai.singa" && n.op_type == "FusedConv");
  };
  const size_t n_all = rg.constants.size();
  std::vector<std::vector<std::pair<int, int>>> uses(n_all);  // (node, input position)
  std::vector<char> opaque(n_all, 0), blocked(n_all, 0);
  for (int i = 0; i < end; ++i) {
    if (!nodes[i]) continue;
    const Node& n = *nodes[i];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int s = n.inputs[k];
      if (s < 0) continue;
      if (is_conv(n) && (k == 0 || k == 3))
        uses[s].emplace_back(i, static_cast<int>(k));
      else
        opaque[s] = 1;
    }
    for (int s : n.outer_inputs) opaque[s] = 1;
  }
  for (int s : g.output_slots) opaque[s] = 1;
  for (int s : result_slots) opaque[s] = 1;
  for (int i = 0; i < end; ++i) {
    if (!nodes[i] || !is_conv(*nodes[i]) || nodes[i]->outputs.size() != 1) continue;
    const int s = nodes[i]->outputs[0];
    if (s < 0 || opaque[s] || uses[s].empty()) continue;
    const Spec& spec = specs[s];
    blocked[s] = spec.dtype == DType::kFloat32 && spec.shape.size() == 4 && spec.shape[1] > 0;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t s = 0; s < n_all; ++s)
      for (const auto& [i, k] : uses[s])
        if (blocked[s] && k == 3 && !blocked[nodes[i]->outputs[0]]) blocked[s] = 0, changed = true;
  }
  for (int i = 0; i < end; ++i) {
    if (!nodes[i] || !is_conv(*nodes[i]) || nodes[i]->outputs.size() != 1) continue;
    Node& n = *nodes[i];
    const auto at = [&](size_t k) {
      return k < n.inputs.size() && n.inputs[k] >= 0 && blocked[n.inputs[k]];
    };
    const int64_t bits =
        (at(0) ? 1 : 0) | (n.outputs[0] >= 0 && blocked[n.outputs[0]] ? 2 : 0) | (at(3) ? 4 : 0);
    if (!bits) continue;
    if (n.op_type == "Conv") fuse(n, -1, "", 0, 0);
    AttrMap m = n.schema->dump(n.attrs.get());
    m["blocked"] = bits;
    n.attrs = fused_schema.ParseAttrs(m, {}, n.name);
  }

  for (auto& n : nodes)
    if (n) rg.nodes.push_back(std::move(*n));
  rg.output_slots = result_slots;
  PlanReleases(rg);
}

void Plan::Capture(const TensorList& inputs) {
  Graph& g = *graph_;
  const Device dev = g.device;
  for (const Tensor& x : inputs) {
    Tensor placeholder(x.shape(), x.dtype(), dev);
    placeholder.CopyFrom(x);
    inputs_.push_back(std::move(placeholder));
  }
  ValueList values = ConstantValues(g);
  for (size_t i = 0; i < inputs_.size(); ++i) values[g.input_slots[i]] = inputs_[i];
  dev.EnableGraph(true);
  try {
    Execute(g, values, static_cast<int>(g.nodes.size()), {});
  } catch (const Error&) {
    // An op that cannot be recorded: the plan walks the nodes instead.
    dev.EnableGraph(false);
    dev.ResetGraph();
    inputs_.clear();
    return;
  }
  dev.EnableGraph(false);
  for (int s : g.output_slots) results_.push_back(values[s].tensor());
  dev.PlanGraphMemory(results_);
  ops_ = dev.runtime().TakeGraph();
  if (ops_.empty()) inputs_.clear(), results_.clear();
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

ValueList Plan::Run(const ValueList& inputs) {
  const Graph& g = *graph_;
  ValueList out;
  if (captured()) {
    for (size_t i = 0; i < inputs.size(); ++i) inputs_[i].CopyFrom(inputs[i].tensor());
    DeviceRuntime::Replay(ops_);
    for (const Tensor& r : results_) out.push_back(r.Clone());
    return out;
  }
  ValueList values = ConstantValues(g);
  for (size_t i = 0; i < inputs.size(); ++i) values[g.input_slots[i]] = inputs[i];
  Execute(g, values, static_cast<int>(g.nodes.size()), {});
  for (int s : g.output_slots) out.push_back(values[s]);
  return out;
}

}  // namespace singa::sonnx
