// SingaRep::Run: checks the inputs against the model's declared types, then
// runs the prepared nodes in order through OpSchema::Run (which records for
// autograd when grad mode is on and a parameter requires grad), dropping each
// intermediate value after its last reader.
#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>

#include "onnx/plan.h"
#include "singa/autograd/autograd.h"
#include "singa/ops/tape.h"

namespace singa::sonnx {
namespace {

std::string Describe(const ValueInfo& v) {
  std::string s = v.dtype == DType::kUndefined ? "any" : std::string(Name(v.dtype));
  if (v.has_shape) {
    s += "[";
    for (size_t i = 0; i < v.dims.size(); ++i) {
      if (i) s += ",";
      s += v.dims[i] >= 0 ? std::to_string(v.dims[i])
                          : (v.dim_params[i].empty() ? std::string("?") : v.dim_params[i]);
    }
    s += "]";
  }
  if (v.sequence) s = "seq(" + s + ")";
  if (v.optional) s = "optional(" + s + ")";
  return v.name + ": " + s;
}

std::string DescribeAll(const std::vector<ValueInfo>& vs) {
  std::string s;
  for (const ValueInfo& v : vs) s += (s.empty() ? "" : ", ") + Describe(v);
  return s;
}

// Symbolic dims must take one value across all inputs of a run (a
// sequence's elements may differ: their dims are not bound).
void CheckTensor(const ValueInfo& info, const Tensor& t,
                 std::unordered_map<std::string, int64_t>* symbols) {
  SINGA_CHECK(t.defined(), ShapeError, "SingaRep::Run: input '" << info.name << "' is undefined");
  SINGA_CHECK(info.dtype == DType::kUndefined || t.dtype() == info.dtype, DTypeError,
              "SingaRep::Run: input '" << info.name << "' must be " << Describe(info) << ", got "
                                       << t.ToString());
  if (!info.has_shape) return;
  SINGA_CHECK(static_cast<size_t>(t.ndim()) == info.dims.size(), ShapeError,
              "SingaRep::Run: input '" << info.name << "' must be " << Describe(info) << ", got "
                                       << t.ToString() << " (rank " << t.ndim() << ")");
  for (size_t i = 0; i < info.dims.size(); ++i) {
    const int64_t got = t.shape()[i];
    if (info.dims[i] >= 0) {
      SINGA_CHECK(got == info.dims[i], ShapeError,
                  "SingaRep::Run: input '" << info.name << "' must be " << Describe(info)
                                           << ", got " << t.ToString() << " (dim " << i << ")");
    } else if (symbols && !info.dim_params[i].empty()) {
      auto [it, fresh] = symbols->emplace(info.dim_params[i], got);
      SINGA_CHECK(fresh || it->second == got, ShapeError,
                  "SingaRep::Run: dim '" << info.dim_params[i] << "' of input '" << info.name
                                         << "' is " << got << ", but " << it->second
                                         << " in an earlier input");
    }
  }
}

void CheckInput(const ValueInfo& info, const Value& v,
                std::unordered_map<std::string, int64_t>& symbols) {
  if (info.optional && v.is_none()) return;
  SINGA_CHECK(v.is_sequence() == info.sequence, DTypeError,
              "SingaRep::Run: input '" << info.name << "' must be " << Describe(info) << ", got "
                                       << v.ToString());
  if (!v.is_sequence()) return CheckTensor(info, v.tensor(), &symbols);
  for (const Tensor& t : v.sequence()) CheckTensor(info, t, nullptr);
}

}  // namespace

// A subgraph's plans (an If branch a streaming model takes on every call, a
// Loop or Scan body a run enters on every iteration): one per signature of
// its inputs and of the values it reads from enclosing graphs that are not
// constants there (the enclosing graph's constants, by storage, are the
// plan's own), so
// that it replays its recording instead of walking its nodes. At most
// kMaxSubgraphPlans; a new signature beyond them drops the others.
struct SubgraphPlans {
  struct Entry {
    std::shared_ptr<Graph> graph;  // the subgraph as the plan sees it (export expands it)
    std::unique_ptr<Plan> plan;
  };
  std::mutex mu;
  std::map<std::string, Entry> by_key;
  SharedArena arena;
};

GraphAttr::GraphAttr(std::shared_ptr<const Graph> graph, std::vector<int> outer)
    : graph_(std::move(graph)),
      outer_(std::move(outer)),
      plans_(std::make_shared<SubgraphPlans>()) {}

namespace {

constexpr size_t kMaxSubgraphPlans = 16;

// Whether subgraphs run by plans on this thread (set by a run whose model
// uses plans, SingaRep::use_plan, for its duration), and whether their
// planned runs are recorded (not inside a planned run of the whole graph,
// whose own record covers them).
struct SubgraphPlanMode {
  bool plans = false, record = true;
};
thread_local SubgraphPlanMode t_subgraph_plans;

class SubgraphPlansScope {
 public:
  explicit SubgraphPlansScope(SubgraphPlanMode mode) : saved_(t_subgraph_plans) {
    t_subgraph_plans = mode;
  }
  ~SubgraphPlansScope() { t_subgraph_plans = saved_; }
  SubgraphPlansScope(const SubgraphPlansScope&) = delete;
  SubgraphPlansScope& operator=(const SubgraphPlansScope&) = delete;

 private:
  SubgraphPlanMode saved_;
};

void RecordPlannedRun(const std::shared_ptr<Graph>& graph, const ValueList& inputs, int last_layers,
                      const std::vector<std::string>& aux_output, ValueList& result);

// A subgraph's plan inputs (its own, then the enclosing values it reads
// that are not constants there) and the key of its plan for them; nullopt
// where a plan does not apply (a sequence or absent value).
struct Signature {
  ValueList inputs;
  std::vector<char> constant;  // per enclosing value: a constant there
  std::string key;
};

std::optional<Signature> SignatureOf(const GraphAttr& attr, const ValueList& inputs,
                                     const Graph& parent, const ValueList& parent_values) {
  const std::vector<int>& outer = attr.outer();
  Signature sig{inputs, std::vector<char>(outer.size(), 0), {}};
  for (size_t k = 0; k < outer.size(); ++k) {
    const Value& v = parent_values[outer[k]];
    const Tensor& c = parent.constants[outer[k]];
    sig.constant[k] = c.defined() && !v.is_sequence() && v.tensor().defined() &&
                      v.tensor().raw_data() == c.raw_data() && v.tensor().shape() == c.shape() &&
                      v.tensor().dtype() == c.dtype();
    // A constant by its storage: a parameter replaced (not written in
    // place) makes another plan.
    if (sig.constant[k]) {
      sig.key += std::to_string(reinterpret_cast<uintptr_t>(c.raw_data())) + ",";
      continue;
    }
    sig.inputs.push_back(v);
    sig.key += std::to_string(k) + ",";
  }
  for (const Value& v : sig.inputs) {
    if (v.is_sequence() || v.is_none()) return std::nullopt;
    sig.key += ";" + v.ToString();
  }
  return sig;
}

// The subgraph `attr` run through its plan for these values, its results
// recorded as one planned run where the run records (for the export);
// nullopt where a plan does not apply (SignatureOf, autograd on, a capture
// in progress).
std::optional<ValueList> RunSubgraphPlan(const GraphAttr& attr, const ValueList& inputs,
                                         const Graph& parent, const ValueList& parent_values) {
  const Graph& sub = attr.graph();
  if (!t_subgraph_plans.plans || GradEnabled() || TrainingMode() || sub.device.graph_enabled())
    return std::nullopt;
  std::optional<Signature> sig = SignatureOf(attr, inputs, parent, parent_values);
  if (!sig) return std::nullopt;
  const std::vector<int>& outer = attr.outer();
  const std::vector<char>& constant = sig->constant;
  const ValueList& plan_inputs = sig->inputs;
  const std::string& key = sig->key;
  SubgraphPlans& plans = attr.plans();
  std::lock_guard<std::mutex> lock(plans.mu);
  SubgraphPlans::Entry& entry = plans.by_key[key];
  ValueList result;
  if (entry.plan && entry.plan->fresh()) {
    result = entry.plan->Run(plan_inputs);
  } else {
    // The subgraph with the enclosing constants as its own and the other
    // enclosing values as inputs after its own.
    auto g = std::make_shared<Graph>(sub);
    for (size_t k = 0; k < outer.size(); ++k) {
      const int slot = sub.outer_slots[k];
      if (constant[k]) {
        g->constants[slot] = parent.constants[outer[k]];
      } else {
        g->input_slots.push_back(slot);
        g->inputs.push_back(
            ValueInfo{sub.outer_names[k], parent_values[outer[k]].tensor().dtype()});
      }
    }
    ValueList values = ConstantValues(*g);
    for (size_t i = 0; i < plan_inputs.size(); ++i) values[g->input_slots[i]] = plan_inputs[i];
    if (plans.by_key.size() > kMaxSubgraphPlans) {
      std::erase_if(plans.by_key, [&](const auto& kv) { return kv.first != key; });
      plans.arena = SharedArena();
    }
    entry.graph = g;
    entry.plan = std::make_unique<Plan>(*g, std::move(values), static_cast<int>(g->nodes.size()),
                                        g->output_slots, plans.arena, result);
  }
  if (t_subgraph_plans.record) RecordPlannedRun(entry.graph, plan_inputs, -1, {}, result);
  return result;
}

}  // namespace

bool SubgraphReplays(const GraphAttr& attr, const Graph& parent, const ValueList& parent_values) {
  std::optional<Signature> sig = SignatureOf(attr, {}, parent, parent_values);
  if (!sig) return false;
  SubgraphPlans& plans = attr.plans();
  std::lock_guard<std::mutex> lock(plans.mu);
  auto it = plans.by_key.find(sig->key);
  return it != plans.by_key.end() && it->second.plan && it->second.plan->captured();
}

ValueList RunSubgraph(const GraphAttr& attr, const ValueList& inputs, const Graph& parent,
                      const ValueList& parent_values, const std::string& where) {
  const Graph& sub = attr.graph();
  SINGA_CHECK(inputs.size() == sub.input_slots.size(), InvalidModel,
              where << ": the subgraph takes " << sub.input_slots.size() << " inputs, "
                    << inputs.size() << " given");
  if (auto planned = RunSubgraphPlan(attr, inputs, parent, parent_values)) return *planned;
  const std::vector<int>& outer = attr.outer();
  ValueList values = ConstantValues(sub);
  for (size_t i = 0; i < inputs.size(); ++i) values[sub.input_slots[i]] = inputs[i];
  for (size_t k = 0; k < outer.size(); ++k) values[sub.outer_slots[k]] = parent_values[outer[k]];
  Execute(sub, values, static_cast<int>(sub.nodes.size()), {});
  ValueList out;
  for (int s : sub.output_slots) out.push_back(values[s]);
  return out;
}

namespace {

// The graph attributes of a node run with the values of its graph bound.
class Scope final : public GraphScope {
 public:
  Scope(const Graph& g, const ValueList& values) : g_(g), values_(values) {}
  ValueList Run(const Subgraph& graph, const ValueList& inputs,
                const std::string& where) const override {
    const auto* attr = dynamic_cast<const GraphAttr*>(&graph);
    SINGA_CHECK(attr, InvalidModel, where << ": not a graph of this model");
    return RunSubgraph(*attr, inputs, g_, values_, where);
  }
  std::vector<std::pair<Tensor, Tensor>> Gradients(const Tensor& y) const override {
    return autograd::Gradients(y);
  }

 private:
  const Graph& g_;
  const ValueList& values_;
};

}  // namespace

ValueList ConstantValues(const Graph& g) {
  return ValueList(g.constants.begin(), g.constants.end());
}

ValueList RunNode(const Graph& g, const Node& node, const ValueList& in, const ValueList& values,
                  ValueReads* reads) {
  const Scope scope(g, values);
  return node.schema->RunValues(in, node.attrs, node.on_values,
                                static_cast<int>(node.outputs.size()), node.name, &scope, g.device,
                                reads);
}

void Execute(const Graph& g, ValueList& values, int end, const std::vector<char>& keep,
             const NodeHook* hook) {
  ValueList in;
  for (int i = 0; i < end; ++i) {
    const Node& node = g.nodes[i];
    in.clear();
    for (int s : node.inputs) in.push_back(s >= 0 ? values[s] : Value());
    if (hook && hook->before) hook->before(i, in);
    std::optional<ValueList> given;
    if (hook && hook->run) given = hook->run(i, in);
    ValueList out = given ? std::move(*given) : RunNode(g, node, in, values);
    if (hook && hook->after) hook->after(i);
    for (size_t k = 0; k < node.outputs.size() && k < out.size(); ++k)
      if (node.outputs[k] >= 0) values[node.outputs[k]] = std::move(out[k]);
    for (int s : g.release_after[i])
      if (keep.empty() || !keep[s]) values[s] = Value();
  }
}

// The plans by signature, least recently used dropped first once there are
// more than kMaxPlans or their arenas hold more than kMaxPlanBytes: a model
// called on inputs of ever new shapes keeps a bounded set. The plans share
// one arena (they run one at a time, under `mu`).
struct SingaRep::Plans {
  static constexpr size_t kMaxPlans = 64;
  static constexpr size_t kMaxPlanBytes = size_t{512} << 20;
  struct Entry {
    std::unique_ptr<Plan> plan;
    uint64_t used = 0;
  };
  std::mutex mu;
  bool enabled = true;
  int64_t declared_batch = -1;  // the model's own, once SetBatchSize changed it
  std::map<std::string, Entry> by_key;
  uint64_t clock = 0;
  std::vector<std::string> latest_op_types;
  SharedArena arena;

  // The bytes of the distinct arenas the plans hold.
  size_t ArenaBytes() const {
    std::set<const void*> seen;
    size_t n = 0;
    for (const auto& [k, e] : by_key)
      if (e.plan && seen.insert(e.plan->arena().memory.get()).second) n += e.plan->arena().bytes;
    return n;
  }

  // Moves the plans placed in an arena that has since grown into the
  // shared one (they would keep the old one alive beside it), then drops
  // least recently used plans other than `keep` while over a bound.
  void Trim(const std::string& keep) {
    for (auto& [key, e] : by_key)
      if (e.plan && e.plan->arena().memory && e.plan->arena().memory != arena.memory)
        e.plan->MoveTo(arena);
    while (by_key.size() > 1 && (by_key.size() > kMaxPlans || ArenaBytes() > kMaxPlanBytes)) {
      auto oldest = by_key.end();
      for (auto it = by_key.begin(); it != by_key.end(); ++it)
        if (it->first != keep && (oldest == by_key.end() || it->second.used < oldest->second.used))
          oldest = it;
      by_key.erase(oldest);
    }
  }
};

SingaRep::SingaRep(std::shared_ptr<Graph> graph)
    : graph_(std::move(graph)), plans_(std::make_unique<Plans>()) {}
SingaRep::~SingaRep() = default;

void SingaRep::set_use_plan(bool on) {
  std::lock_guard<std::mutex> lock(plans_->mu);
  plans_->enabled = on;
  plans_->by_key.clear();
  plans_->arena = {};
}
bool SingaRep::use_plan() const { return plans_->enabled; }
size_t SingaRep::num_plans() const {
  std::lock_guard<std::mutex> lock(plans_->mu);
  return plans_->by_key.size();
}
size_t SingaRep::plan_arena_bytes() const {
  std::lock_guard<std::mutex> lock(plans_->mu);
  return plans_->ArenaBytes();
}
std::vector<std::string> SingaRep::planned_op_types() const {
  std::lock_guard<std::mutex> lock(plans_->mu);
  return plans_->latest_op_types;
}

const std::map<std::string, Tensor>& SingaRep::params() const { return graph_->params; }
const std::vector<ValueInfo>& SingaRep::inputs() const { return graph_->inputs; }

void SingaRep::SetBatchSize(int64_t batch) {
  SINGA_CHECK(batch > 0, ShapeError,
              "SetBatchSize: the batch size must be positive, got " << batch);
  TensorList like;
  for (const ValueInfo& v : graph_->inputs) {
    Shape s(v.dims.size(), 1);
    if (!s.empty()) s[0] = batch;
    like.push_back(v.has_shape && !s.empty() ? Tensor(s) : Tensor());
  }
  AdoptBatchSize(like);
}

void SingaRep::AdoptBatchSize(const TensorList& inputs) {
  bool changed = false;
  for (size_t i = 0; i < inputs.size() && i < graph_->inputs.size(); ++i) {
    ValueInfo& v = graph_->inputs[i];
    const Tensor& t = inputs[i];
    // A symbolic first dimension takes any batch already.
    if (!t.defined() || !v.has_shape || v.dims.empty() || t.ndim() != std::ssize(v.dims) ||
        v.dims[0] < 0 || v.dims[0] == t.dim(0))
      continue;
    if (plans_->declared_batch < 0) plans_->declared_batch = v.dims[0];
    v.dims[0] = t.dim(0);
    changed = true;
  }
  if (!changed) return;
  std::lock_guard<std::mutex> lock(plans_->mu);
  plans_->by_key.clear();
  plans_->arena = {};
}
const std::vector<ValueInfo>& SingaRep::outputs() const { return graph_->outputs; }
int SingaRep::num_nodes() const { return static_cast<int>(graph_->nodes.size()); }
std::vector<std::vector<std::string>> SingaRep::node_output_names() const {
  std::vector<std::vector<std::string>> v;
  for (const Node& n : graph_->nodes) {
    v.emplace_back();
    for (int s : n.outputs)
      if (s >= 0) v.back().push_back(graph_->slot_names[s]);
  }
  return v;
}

std::vector<std::string> SingaRep::node_op_types() const {
  std::vector<std::string> v;
  for (const Node& n : graph_->nodes) v.push_back(n.op_type);
  return v;
}
int SingaRep::opset(std::string_view domain) const {
  auto it = graph_->opsets.find(CanonicalDomain(domain));
  return it == graph_->opsets.end() ? 0 : it->second;
}
int64_t SingaRep::ir_version() const { return graph_->ir_version; }
Device SingaRep::device() const { return graph_->device; }

// The run again, recording every op, on the recorded inputs (zeros of the
// same dtype and shape where only those were kept).
OpSchema::Expansion ExpandPlannedRun(const PlannedRunAttrs& a, const TensorList& recorded) {
  OpSchema::Expansion e;
  for (const Tensor& t : recorded)
    e.inputs.push_back(t.hollow() ? Tensor::Zeros(t.shape(), t.dtype(), t.device()) : t);
  SingaRep rep(a.graph);
  rep.set_use_plan(false);
  struct Recording {
    bool prev = RecordingEnabled();
    Recording() { SetRecording(true); }
    ~Recording() { SetRecording(prev); }
  } recording;
  GradModeGuard no_grad(false);
  TrainingModeGuard inference(false);
  TracingGuard trace(true);
  e.outputs = rep.Run(e.inputs, a.last_layers, a.aux_output);
  return e;
}

const OpSchema& PlannedRunOp() {
  static const OpSchema* schema = [] {
    OpBuilder<PlannedRunAttrs>("PlannedRun")
        .domain("ai.singa")
        .inputs({"inputs..."})
        .outputs({"outputs..."})
        .expand(ExpandPlannedRun);
    return OpRegistry::Find("PlannedRun", kLatestOpset, "ai.singa");
  }();
  return *schema;
}

namespace {
// Registered with the other ops, so the registry lists it.
[[maybe_unused]] const bool kPlannedRunRegistered = (PlannedRunOp(), true);

// The run's record on its results (tensor inputs and results only: runs on
// sequences are not exported).
void RecordPlannedRun(const std::shared_ptr<Graph>& graph, const ValueList& inputs, int last_layers,
                      const std::vector<std::string>& aux_output, ValueList& result) {
  if (!RecordingEnabled()) return;
  auto tensors = [](const ValueList& values, TensorList& out) {
    for (const Value& v : values) {
      if (v.is_sequence() || !v.tensor().defined()) return false;
      out.push_back(v.tensor());
    }
    return true;
  };
  TensorList in, out;
  if (!tensors(inputs, in) || !tensors(result, out)) return;
  // The expansion needs the inputs' dtypes and shapes and, for the export to
  // find them, their identities: an input with an identity of its own (an
  // autograd record; Python gives one to the arrays it converts for a run)
  // is kept as its dtype and shape only; one whose storage is its identity,
  // whole. Borrowed memory is never kept.
  for (Tensor& t : in)
    if (t.block()->borrowed() ||
        (t.id() != t.block().get() && !t.stores_grad() && t.name().empty()))
      t = t.Hollow();
  auto attrs =
      std::make_shared<const PlannedRunAttrs>(PlannedRunAttrs{graph, last_layers, aux_output});
  internal::MaybeRecord(PlannedRunOp(), attrs, in, out);
  for (size_t i = 0; i < out.size(); ++i) result[i] = Value(out[i]);
}
}  // namespace

TensorList SingaRep::Run(const TensorList& inputs, int last_layers,
                         const std::vector<std::string>& aux_output) const {
  const ValueList out = RunValues(ValueList(inputs.begin(), inputs.end()), last_layers, aux_output);
  TensorList result;
  for (size_t i = 0; i < out.size(); ++i) {
    SINGA_CHECK(!out[i].is_sequence(), DTypeError,
                "SingaRep::Run: result " << i << " is a sequence (" << out[i].ToString()
                                         << "): RunValues returns sequences");
    result.push_back(out[i].tensor());
  }
  return result;
}

namespace {
// After the batch changed: the Reshape nodes whose constant shape starts
// with the model's own batch, which a shape error likely comes from.
std::string HardCodedBatch(const Graph& g, int64_t declared) {
  std::string found;
  for (const Node& n : g.nodes) {
    if (n.op_type != "Reshape" || n.inputs.size() < 2 || n.inputs[1] < 0) continue;
    const Tensor& shape = g.constants[n.inputs[1]];
    if (!shape.defined() || shape.dtype() != DType::kInt64 || shape.numel() < 2 ||
        shape.ToVector<int64_t>()[0] != declared)
      continue;
    found += (found.empty() ? "" : ", ") + g.Where(n);
  }
  return found;
}
}  // namespace

ValueList SingaRep::RunValues(const ValueList& inputs, int last_layers,
                              const std::vector<std::string>& aux_output) const {
  return RunOnce(inputs, last_layers, aux_output, nullptr);
}

RunProfile SingaRep::Profile(const ValueList& inputs, int last_layers,
                             const std::vector<std::string>& aux_output) const {
  RunProfile profile;
  profile.outputs = RunOnce(inputs, last_layers, aux_output, &profile);
  return profile;
}

ValueList SingaRep::RunOnce(const ValueList& inputs, int last_layers,
                            const std::vector<std::string>& aux_output, RunProfile* profile) const {
  const int64_t declared = plans_->declared_batch;
  if (declared < 0) return RunChecked(inputs, last_layers, aux_output, profile);
  try {
    return RunChecked(inputs, last_layers, aux_output, profile);
  } catch (const ShapeError& e) {
    const std::string nodes = HardCodedBatch(*graph_, declared);
    if (nodes.empty()) throw;
    throw ShapeError(std::string(e.what()) + " (the model declares batch " +
                     std::to_string(declared) + ", changed by SetBatchSize or a placeholder; " +
                     nodes + " hard-codes " + std::to_string(declared) +
                     " as its first dimension)");
  }
}

ValueList SingaRep::RunChecked(const ValueList& inputs, int last_layers,
                               const std::vector<std::string>& aux_output,
                               RunProfile* profile) const {
  const Graph& g = *graph_;
  const CancelScope cancel(canceller_);
  const SubgraphPlansScope subgraph_plans({plans_->enabled, true});
  const int num_nodes = static_cast<int>(g.nodes.size());
  SINGA_CHECK(last_layers < 0 && last_layers >= -std::max(num_nodes, 1), ShapeError,
              "SingaRep::Run: last_layers must be in [-" << std::max(num_nodes, 1)
                                                         << ", -1] for this model of " << num_nodes
                                                         << " nodes, got " << last_layers);
  // Nodes [0, end) run; with a cut, node end-1's outputs are the result.
  const int end = num_nodes + last_layers + 1;
  const bool cut = last_layers != -1;

  const size_t n_plain = g.inputs.size(), n_all = n_plain + g.shadowed_inputs.size();
  std::unordered_map<std::string, int64_t> symbols;
  if (inputs.size() == n_plain) {
    for (size_t i = 0; i < n_plain; ++i) CheckInput(g.inputs[i], inputs[i], symbols);
  } else {
    SINGA_CHECK(inputs.size() == n_all && n_all > n_plain, ShapeError,
                "SingaRep::Run: the model takes "
                    << n_plain << " input" << (n_plain == 1 ? "" : "s") << " ("
                    << DescribeAll(g.inputs) << "), got " << inputs.size());
    // Every graph input, in the order inputs() then the inputs with
    // initializers: the given values replace the initializers.
    for (size_t i = 0; i < n_all; ++i)
      CheckInput(i < n_plain ? g.inputs[i] : g.shadowed_inputs[i - n_plain], inputs[i], symbols);
  }
  // Inputs in borrowed memory (Block::borrowed) are read in place by a
  // captured plan's replay, which copies them into its own placeholders; a
  // plan build, a node walk or autograd could keep them past the call, so
  // those see copies.
  ValueList owned;
  const ValueList* given = &inputs;
  const auto own = [&] {
    if (given == &owned) return;
    owned = inputs;
    for (Value& v : owned)
      if (!v.is_none() && !v.is_sequence() && v.tensor().block()->borrowed()) {
        Tensor copy(v.tensor().shape(), v.tensor().dtype(), v.tensor().device());
        copy.CopyFrom(v.tensor());
        v = Value(copy.set_requires_grad(false));
      }
    given = &owned;
  };
  // The graph's values with the inputs bound: a replayed plan needs none.
  const auto bound = [&] {
    own();
    ValueList values = ConstantValues(g);
    for (size_t i = 0; i < given->size(); ++i)
      values[i < n_plain ? g.input_slots[i] : g.shadowed_slots[i - n_plain]] = (*given)[i];
    return values;
  };

  std::vector<int> result_slots;
  if (cut) {
    for (int s : g.nodes[end - 1].outputs)
      if (s >= 0) result_slots.push_back(s);
  } else {
    result_slots = g.output_slots;
  }
  for (const std::string& name : aux_output) {
    auto it = g.slot_of.find(name);
    SINGA_CHECK(it != g.slot_of.end(), ShapeError,
                "SingaRep::Run: aux_output '" << name << "' is not a value of the model");
    const int producer = g.producer[it->second];
    SINGA_CHECK(producer < end, ShapeError,
                "SingaRep::Run: aux_output '"
                    << name << "' is computed by " << g.Where(g.nodes[producer])
                    << ", which last_layers=" << last_layers << " does not run");
    result_slots.push_back(it->second);
  }

  if (plans_->enabled && !GradEnabled() && !TrainingMode() && !g.device.graph_enabled() &&
      inputs.size() == n_plain) {
    std::string key = std::to_string(last_layers);
    for (const Value& x : inputs) key += ";" + x.ToString();
    for (const std::string& name : aux_output) key += ";" + name;
    ValueList result;
    {
      const SubgraphPlansScope recorded_whole({true, false});
      std::lock_guard<std::mutex> lock(plans_->mu);
      Plans::Entry& entry = plans_->by_key[key];
      entry.used = ++plans_->clock;
      std::unique_ptr<Plan>& plan = entry.plan;
      const bool fresh = plan && plan->fresh();
      if (!fresh) {
        plan = std::make_unique<Plan>(g, bound(), end, result_slots, plans_->arena, result);
        plans_->latest_op_types = plan->op_types();
        plans_->Trim(key);
      }
      if (fresh || profile) {
        ProfileClock clock(profile);
        if (!plan->captured()) own();
        result = plan->Run(*given, profile ? &profile->nodes : nullptr);
        if (profile) profile->planned = true, profile->replayed = plan->captured();
      }
    }
    RecordPlannedRun(graph_, *given, last_layers, aux_output, result);
    return result;
  }

  ValueList values = bound();
  std::vector<char> keep(values.size(), 0);
  for (int s : result_slots) keep[s] = 1;
  {
    ProfileClock clock(profile);
    std::optional<NodeTimer> timer;
    if (profile) timer.emplace(g, profile->nodes);
    Execute(g, values, end, keep, timer ? &timer->hook() : nullptr);
  }
  ValueList result;
  for (int s : result_slots) result.push_back(values[s]);
  return result;
}

}  // namespace singa::sonnx
