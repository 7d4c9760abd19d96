// The operator registry. One file in src/ops/ registers everything about one
// ONNX operator: name, opset, inputs, attributes with the spec's defaults,
// dtype constraints, shape inference and kernels. The dispatcher, the Python
// binding (and later the importer, exporter and autograd) know no op by name:
// they walk this registry.
//
//   struct LeakyReluAttrs { float alpha = 0.01f; };
//   void LeakyReluForward(KernelCtx& k, const LeakyReluAttrs& a) { ... }
//
//   SINGA_REGISTER_OP(LeakyRelu, LeakyReluAttrs)
//       .since_opset(6)
//       .inputs({"X"}).outputs({"Y"})
//       .attr("alpha", &LeakyReluAttrs::alpha)
//       .dtypes(dtypes::kFloats)
//       .infer(SameAsInput(0))
//       .kernel(LeakyReluForward);
//
//   TensorList y = CallOp("LeakyRelu", {x}, {{"alpha", 0.2f}});  // all outputs
//   Tensor y0 = Call1("LeakyRelu", {x}, {{"alpha", 0.2f}});       // output 0
//
// Inputs and outputs are named as in the spec: a trailing '?' marks an
// optional one, a trailing '...' a variadic (last) one. An absent optional
// input is an undefined Tensor.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "singa/core/tensor.h"
#include "singa/ops/tape.h"
#include "singa/ops/value.h"

namespace singa {

// Default ai.onnx opset of calls and export; newer versions are registered too.
inline constexpr int kLatestOpset = 25;

// The default ONNX domain has two spellings: "" (in models and the registry)
// and "ai.onnx" (in messages); either is accepted wherever a domain is given.
// CanonicalDomain: "" for "ai.onnx", any other domain as it is.
inline std::string CanonicalDomain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string() : std::string(domain);
}
// DomainName: "ai.onnx" for "", any other domain as it is (a view of `domain`).
inline std::string_view DomainName(std::string_view domain) {
  return domain.empty() ? std::string_view("ai.onnx") : domain;
}

using AttrValue =
    std::variant<std::monostate, int64_t, float, std::string, Tensor, std::vector<int64_t>,
                 std::vector<float>, std::vector<std::string>, std::vector<Tensor>, SubgraphPtr>;
using AttrMap = std::map<std::string, AttrValue, std::less<>>;

struct TensorSpec {
  DType dtype;
  Shape shape;
};
using SpecList = std::vector<TensorSpec>;

// Which CPU kernel runs when an op registers both a fast and a reference one.
enum class KernelVariant { kFast, kReference };
// Selects the kernel variant for this thread while alive (tests use it).
class KernelVariantGuard {
 public:
  explicit KernelVariantGuard(KernelVariant v);
  ~KernelVariantGuard();
  static KernelVariant current();

 private:
  KernelVariant prev_;
};

class OpSchema;
class ExportCtx;  // singa/ops/export_ctx.h

// The inputs whose values shape inference read (InferCtx::value), by
// storage block. The ONNX planner passes one to learn which output shapes
// depend on computed values.
struct ValueReads {
  std::vector<const Block*> blocks;
};

// What shape inference sees: the op, the inputs (with their values: shape
// inference may read small inputs such as Reshape's `shape`), and how many
// outputs the caller asked for. `reads`, when given, logs the inputs whose
// values were read.
class InferCtx {
 public:
  InferCtx(const OpSchema& op, std::span<const Tensor> inputs, int num_outputs,
           std::string_view node, ValueReads* reads = nullptr)
      : op_(op), inputs_(inputs), num_outputs_(num_outputs), node_(node), reads_(reads) {}
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool has_input(int i) const { return i < num_inputs() && inputs_[i].defined(); }
  // Input i for its dtype and shape; inference reads its elements only
  // through value(i).
  const Tensor& input(int i) const;
  // Input i for reading its elements (Reshape's `shape`, NonZero's data):
  // logged in `reads`; a GPU tensor is copied to the host.
  const Tensor& value(int i) const;
  const Shape& shape(int i) const { return input(i).shape(); }
  DType dtype(int i) const { return input(i).dtype(); }
  int64_t rank(int i) const { return input(i).ndim(); }
  int num_outputs() const { return num_outputs_; }
  const OpSchema& op() const { return op_; }
  // "Conv (node 'conv1')": prefix for error messages.
  std::string where() const;
  // "X: float32[1,3,224,224], W: float32[...]" for error messages.
  std::string inputs_string() const;

 private:
  const OpSchema& op_;
  std::span<const Tensor> inputs_;
  int num_outputs_;
  std::string_view node_;
  ValueReads* reads_;
  mutable std::vector<std::unique_ptr<Tensor>> host_values_;  // of GPU inputs
};

// What a kernel sees: inputs and preallocated outputs.
struct KernelCtx {
  std::span<const Tensor> inputs;
  std::span<Tensor> outputs;
  // What the kernel keeps from one replay of a recorded op (a captured
  // plan's) to the next, whose inputs and outputs keep their dtypes and
  // shapes: null when the op runs eagerly. The recorded op owns it.
  std::shared_ptr<void>* state = nullptr;
  bool has_input(int i) const { return i < static_cast<int>(inputs.size()) && inputs[i].defined(); }
  const Tensor& input(int i) const { return inputs[i]; }
  const Tensor& output(int i) const { return outputs[i]; }
  int num_inputs() const { return static_cast<int>(inputs.size()); }
  int num_outputs() const { return static_cast<int>(outputs.size()); }
};

struct AttrInfo {
  std::string name;
  bool required = false;
  AttrValue default_value;  // the struct's initial value (monostate when unset)
  bool graph = false;       // a graph attribute (a SubgraphPtr member)
};

// What a value kernel sees (ops over sequences and optionals, control flow):
// inputs as Values (none where absent), and the scope its graph attributes
// run in. Its results are Values too; the tensor work inside goes through
// registered ops, so it records for autograd like any other op call.
class ValueCtx {
 public:
  ValueCtx(const OpSchema& op, const ValueList& inputs, int num_outputs, std::string_view node,
           const GraphScope* scope, Device device)
      : op_(op),
        inputs_(inputs),
        num_outputs_(num_outputs),
        node_(node),
        scope_(scope),
        device_(device) {}
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool has_input(int i) const { return i < num_inputs() && !inputs_[i].is_none(); }
  // Input i; none when absent.
  const Value& input(int i) const;
  // Input i as a tensor: ShapeError naming it when absent, DTypeError when a sequence.
  const Tensor& tensor(int i) const;
  // Input i as a sequence: DTypeError naming it otherwise.
  const TensorList& sequence(int i) const;
  int num_outputs() const { return num_outputs_; }
  // Where new tensors (counters, lengths) are made: the model's device.
  Device device() const { return device_; }
  const OpSchema& op() const { return op_; }
  // "Loop (node 'loop1')": prefix for error messages.
  std::string where() const;
  // Runs a graph attribute on `inputs`; `what` names it ("body").
  ValueList RunGraph(const Subgraph& graph, const ValueList& inputs, std::string_view what) const;
  // Autograd from y (GraphScope::Gradients).
  std::vector<std::pair<Tensor, Tensor>> Gradients(const Tensor& y) const;

 private:
  const OpSchema& op_;
  const ValueList& inputs_;
  int num_outputs_;
  std::string_view node_;
  const GraphScope* scope_;
  Device device_;
};

class OpSchema {
 public:
  using ParseFn = std::function<std::shared_ptr<const void>(const AttrMap&, const InferCtx&)>;
  using DumpFn = std::function<AttrMap(const void*)>;
  using InferFn = std::function<SpecList(const InferCtx&, const void*)>;
  using KernelFn = std::function<void(KernelCtx&, const void*)>;
  // Computes outputs as views of the inputs (Reshape, Squeeze, ...): no kernel runs.
  using AliasFn = std::function<TensorList(const InferCtx&, const void*)>;
  // Gradients of the inputs from the gradients of the outputs, written with
  // framework ops; an undefined entry means no gradient for that input.
  using BackwardFn = std::function<TensorList(const GradCtx&, const void*)>;
  // Writes the op as ONNX node(s) where our form differs from ONNX's (see
  // singa/ops/export_ctx.h); without one the export is the identity.
  using ExportFn = std::function<void(ExportCtx&, const void*)>;
  // Runs the op on Values (sequences, optionals, graph attributes).
  using ValueKernelFn = std::function<ValueList(const ValueCtx&, const void*)>;

  // A graph attribute the model does not spell out (Gradient's): the
  // importer cuts it from the enclosing graph, as the nodes that compute the
  // value named by string attribute `output` from the values named by the
  // string(s) attributes `inputs`, and passes it as attribute `name`.
  struct CutGraph {
    std::string name;
    std::vector<std::string> inputs;
    std::string output;
  };

  struct DTypeRule {
    std::vector<DType> allowed;
    std::vector<int> inputs;  // all of these must have one dtype from `allowed`
  };

  std::string name, domain;
  int since_version = 1;
  std::vector<std::string> input_names, output_names;  // with '?' / '...' marks
  std::vector<AttrInfo> attrs;
  std::vector<DTypeRule> dtype_rules;
  ParseFn parse;
  DumpFn dump;
  InferFn infer;
  KernelFn kernel, reference;
  // The kernel for a GPU and the dtypes (of input 0) it takes; elsewhere on
  // a GPU the CPU kernel runs, on copies.
  KernelFn cuda_kernel;
  std::vector<DType> cuda_dtypes;
  // Whether cuda_kernel takes these inputs and attributes (absent: it takes
  // every input of cuda_dtypes); the CPU kernel runs on copies otherwise.
  std::function<bool(const InferCtx&, const void*)> cuda_takes;
  // Inputs whose values only the host reads (shape inference and every
  // kernel): Reshape's shape, a reduction's axes. A host tensor there stays
  // on the host when the op runs on a GPU, where a copy would make each
  // read wait for the GPU.
  std::vector<int> host_inputs;
  AliasFn alias;
  BackwardFn backward;
  ExportFn to_onnx;
  // Export of a node recorded in this version's form at a newer target opset
  // (ExportCtx::opset) whose version differs. Without one, the exporter
  // upgrades a node whose attributes the newer version parses with the same
  // defaults and whose inputs and outputs it names alike, unless a version
  // in between changes_meaning.
  ExportFn upgrade;
  // Internal ops whose record stands for a computation recorded elsewhere (a
  // captured graph step, an imported model's planned run): that computation,
  // from the attributes and the record's inputs, for the export to walk.
  struct Expansion {
    TensorList inputs;   // stand-ins of the record's inputs, in order
    TensorList outputs;  // with their own records, one per record output
  };
  using ExpandFn = std::function<Expansion(const void* attrs, const TensorList& inputs)>;
  ExpandFn expand;
  // Inputs the op keeps as state (running statistics): an imported model's
  // initializers there are buffers, not weights to train.
  std::vector<int> state_inputs;
  // This version means something else than the previous one with the same
  // attributes and inputs: records of older versions need their upgrade hook.
  bool changes_meaning = false;
  // The opset that removed the op (ONNX marks it deprecated there); 0: none.
  int removed_in = 0;
  ValueKernelFn value_kernel;
  std::optional<CutGraph> cut_graph;
  // 2 x multiply-adds of one application from its input shapes and its
  // output 0's shape (matrix products; `singa info`'s FLOPs).
  std::function<int64_t(const std::vector<Shape>& inputs, const Shape& output)> flops;
  // Checks a model's node against the op before it runs (counts of inputs
  // and outputs against graph attributes); `where` names the node.
  std::function<void(int num_inputs, int num_outputs, const void* attrs, const std::string& where)>
      validate;
  // Outputs the backward reads (Dropout's mask): when the op is recorded for
  // autograd, at least this many are computed and saved, whatever the caller
  // asked for; the caller still gets only the outputs it asked for.
  int backward_outputs = 0;
  // Random ops (and Dropout): their results are never folded into
  // constants, even from constant inputs (the ONNX planner reads this).
  bool nondeterministic = false;

  int min_inputs() const;
  int max_inputs() const;  // INT_MAX when variadic
  int min_outputs() const;
  int max_outputs() const;
  const AttrInfo* find_attr(std::string_view attr) const;

  // Parses attributes (type-checked, defaults applied, unknown names rejected).
  std::shared_ptr<const void> ParseAttrs(const AttrMap& attrs, std::span<const Tensor> inputs,
                                         std::string_view node = "") const;
  // Whether cuda_kernel takes these inputs (c's) and attributes: the op runs
  // on a GPU, else its CPU kernel runs there on copies.
  bool CudaTakes(const InferCtx& c, const void* attrs) const;
  // Runs the op: checks inputs and dtypes, infers output specs, allocates the
  // outputs and executes the kernel through Device::Exec. num_outputs < 0
  // asks for every non-optional output. `reads`: see InferCtx.
  TensorList Run(std::span<const Tensor> inputs, const std::shared_ptr<const void>& attrs,
                 int num_outputs = -1, std::string_view node = "",
                 ValueReads* reads = nullptr) const;
  // Runs the op on Values: through the value kernel where the op has one and
  // either `on_values` (RunsOnValues of its attributes) or an input is not a
  // tensor the tensor kernel could take (a sequence, or none where the op
  // requires a tensor); else through Run (with `reads`). `scope` runs graph
  // attributes.
  ValueList RunValues(const ValueList& inputs, const std::shared_ptr<const void>& attrs,
                      bool on_values, int num_outputs, std::string_view node,
                      const GraphScope* scope, Device device, ValueReads* reads = nullptr) const;
  // Whether a node with these attributes runs on its value kernel whatever
  // its inputs: the op has no tensor kernel, or a graph attribute is set.
  bool RunsOnValues(const AttrMap& attrs) const;
  // Shape inference only.
  SpecList Infer(std::span<const Tensor> inputs, const void* attrs, int num_outputs = -1,
                 std::string_view node = "", ValueReads* reads = nullptr) const;

 private:
  void CheckInputs(const InferCtx& ctx) const;
  // Whether input i, t, is a host tensor of host_inputs (stays on the host).
  bool HostOnly(int i, const Tensor& t) const;
  int ResolveNumOutputs(int requested, const InferCtx& ctx) const;
};

class OpRegistry {
 public:
  static void Add(std::unique_ptr<OpSchema> schema);
  // The version of `name` for a model of opset `opset`: the highest
  // since_version not above it. Null when none.
  static const OpSchema* Find(std::string_view name, int opset = kLatestOpset,
                              std::string_view domain = "");
  // Like Find, but throws UnsupportedOp naming the op, opset and domain.
  static const OpSchema& Get(std::string_view name, int opset = kLatestOpset,
                             std::string_view domain = "");
  static std::vector<const OpSchema*> All();
  // The ops that have run on a GPU through their CPU kernel (no GPU kernel
  // for their inputs), in this process.
  static std::vector<std::string> HostFallbacks();
};

// Runs an op by name with generic attributes.
TensorList CallOp(std::string_view name, std::span<const Tensor> inputs, const AttrMap& attrs = {},
                  int opset = kLatestOpset, int num_outputs = -1);
inline TensorList CallOp(std::string_view name, std::initializer_list<Tensor> inputs,
                         const AttrMap& attrs = {}, int opset = kLatestOpset,
                         int num_outputs = -1) {
  return CallOp(name, std::span<const Tensor>(inputs.begin(), inputs.size()), attrs, opset,
                num_outputs);
}

// The one way to call a single-output op from C++: its output 0.
//   Tensor y = Call1("LeakyRelu", {x}, {{"alpha", 0.2f}});
inline Tensor Call1(std::string_view name, std::initializer_list<Tensor> inputs,
                    const AttrMap& attrs = {}, int opset = kLatestOpset) {
  return CallOp(name, inputs, attrs, opset)[0];
}
inline Tensor Call1(std::string_view name, std::span<const Tensor> inputs,
                    const AttrMap& attrs = {}, int opset = kLatestOpset) {
  return CallOp(name, inputs, attrs, opset)[0];
}

// ---- attribute conversion (used by OpBuilder) ----------------------------
namespace attr_detail {

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

[[noreturn]] void TypeMismatch(const InferCtx& ctx, std::string_view attr, std::string_view want,
                               const AttrValue& got);

template <class M>
M FromAttr(const AttrValue& v, const InferCtx& ctx, std::string_view name) {
  if constexpr (IsOptional<M>::value) {
    return FromAttr<typename M::value_type>(v, ctx, name);
  } else if constexpr (std::is_same_v<M, bool>) {
    if (auto* i = std::get_if<int64_t>(&v)) return *i != 0;
    TypeMismatch(ctx, name, "int", v);
  } else if constexpr (std::is_same_v<M, DType>) {
    if (auto* i = std::get_if<int64_t>(&v)) {
      SINGA_CHECK(*i > 0 && *i < kNumDTypes, DTypeError,
                  ctx.where() << ": attribute '" << name << "' is not a dtype code: " << *i);
      return static_cast<DType>(*i);
    }
    if (auto* s = std::get_if<std::string>(&v)) return DTypeFromName(*s);
    TypeMismatch(ctx, name, "int (dtype)", v);
  } else if constexpr (std::is_integral_v<M>) {
    if (auto* i = std::get_if<int64_t>(&v)) return static_cast<M>(*i);
    TypeMismatch(ctx, name, "int", v);
  } else if constexpr (std::is_floating_point_v<M>) {
    if (auto* f = std::get_if<float>(&v)) return static_cast<M>(*f);
    if (auto* i = std::get_if<int64_t>(&v)) return static_cast<M>(*i);
    TypeMismatch(ctx, name, "float", v);
  } else if constexpr (std::is_same_v<M, std::vector<float>>) {
    if (auto* f = std::get_if<std::vector<float>>(&v)) return *f;
    if (auto* i = std::get_if<std::vector<int64_t>>(&v))
      return std::vector<float>(i->begin(), i->end());
    TypeMismatch(ctx, name, "floats", v);
  } else {
    if (auto* m = std::get_if<M>(&v)) return *m;
    TypeMismatch(ctx, name, "matching", v);
  }
}

template <class M>
AttrValue ToAttr(const M& m) {
  if constexpr (IsOptional<M>::value) {
    return m ? ToAttr(*m) : AttrValue{};
  } else if constexpr (std::is_same_v<M, SubgraphPtr>) {
    return m ? AttrValue(m) : AttrValue{};
  } else if constexpr (std::is_same_v<M, DType>) {
    return static_cast<int64_t>(m);
  } else if constexpr (std::is_integral_v<M>) {
    return static_cast<int64_t>(m);
  } else if constexpr (std::is_floating_point_v<M>) {
    return static_cast<float>(m);
  } else {
    return m;
  }
}

}  // namespace attr_detail

// Builds and registers one OpSchema; see the example at the top of this file.
template <class A>
class OpBuilder {
 public:
  explicit OpBuilder(std::string name) : s_(std::make_unique<OpSchema>()) {
    s_->name = std::move(name);
  }
  ~OpBuilder() {
    // Attributes captured by the parse/dump closures must outlive the builder.
    auto setters = std::make_shared<SetterMap>(std::move(attr_setters_));
    auto getters = std::make_shared<std::vector<Getter>>(std::move(attr_getters_));
    auto infos = s_->attrs;
    s_->parse = [setters, infos](const AttrMap& m, const InferCtx& ctx) {
      auto a = std::make_shared<A>();
      for (auto& [key, value] : m) {
        auto it = setters->find(key);
        SINGA_CHECK(it != setters->end(), InvalidModel,
                    ctx.where() << ": unknown attribute '" << key << "'");
        if (!std::holds_alternative<std::monostate>(value)) it->second(*a, value, ctx);
      }
      for (const AttrInfo& info : infos)
        SINGA_CHECK(!info.required || m.count(info.name), InvalidModel,
                    ctx.where() << ": required attribute '" << info.name << "' is missing");
      return std::shared_ptr<const void>(std::move(a));
    };
    s_->dump = [getters](const void* p) {
      AttrMap m;
      for (auto& g : *getters) g(*static_cast<const A*>(p), m);
      return m;
    };
    OpRegistry::Add(std::move(s_));
  }

  OpBuilder& since_opset(int v) {
    s_->since_version = v;
    return *this;
  }
  OpBuilder& domain(std::string d) {
    s_->domain = std::move(d);
    return *this;
  }
  OpBuilder& inputs(std::vector<std::string> names) {
    s_->input_names = std::move(names);
    return *this;
  }
  OpBuilder& outputs(std::vector<std::string> names) {
    s_->output_names = std::move(names);
    return *this;
  }

  template <class M>
  OpBuilder& attr(std::string name, M A::*member, bool required = false) {
    attr_setters_[name] = [member, name](A& a, const AttrValue& v, const InferCtx& ctx) {
      a.*member = attr_detail::FromAttr<M>(v, ctx, name);
    };
    attr_getters_.push_back([member, name](const A& a, AttrMap& m) {
      AttrValue v = attr_detail::ToAttr(a.*member);
      if (!std::holds_alternative<std::monostate>(v)) m[name] = std::move(v);
    });
    A defaults{};
    s_->attrs.push_back(
        {name, required, attr_detail::ToAttr(defaults.*member), std::is_same_v<M, SubgraphPtr>});
    return *this;
  }
  // A graph attribute cut from the enclosing graph (OpSchema::CutGraph).
  OpBuilder& cut_graph(std::string name, SubgraphPtr A::*member, std::vector<std::string> inputs,
                       std::string output) {
    attr_setters_[name] = [member](A& a, const AttrValue& v, const InferCtx&) {
      a.*member = std::get<SubgraphPtr>(v);
    };
    s_->cut_graph = OpSchema::CutGraph{std::move(name), std::move(inputs), std::move(output)};
    return *this;
  }

  // Every input in `inputs` must have one dtype, and it must be in `allowed`.
  OpBuilder& dtypes(std::vector<DType> allowed, std::vector<int> inputs = {0}) {
    s_->dtype_rules.push_back({std::move(allowed), std::move(inputs)});
    return *this;
  }
  OpBuilder& infer(std::function<SpecList(const InferCtx&, const A&)> fn) {
    s_->infer = [fn](const InferCtx& c, const void* a) { return fn(c, *static_cast<const A*>(a)); };
    return *this;
  }
  OpBuilder& kernel(std::function<void(KernelCtx&, const A&)> fn) {
    s_->kernel = Erase(std::move(fn));
    return *this;
  }
  // The kernel for DeviceType::kCuda, for inputs whose input 0 has one of
  // `dtypes` (op files register it through SINGA_CUDA_KERNEL, ops/common.h).
  // `takes`, when given, narrows the inputs and attributes it takes (cuDNN's
  // symmetric padding, say); the others run the CPU kernel on copies.
  OpBuilder& cuda_kernel(std::function<void(KernelCtx&, const A&)> fn, std::vector<DType> dtypes,
                         std::function<bool(const InferCtx&, const A&)> takes = nullptr) {
    s_->cuda_kernel = Erase(std::move(fn));
    s_->cuda_dtypes = std::move(dtypes);
    if (takes)
      s_->cuda_takes = [takes](const InferCtx& c, const void* a) {
        return takes(c, *static_cast<const A*>(a));
      };
    return *this;
  }
  // Inputs read on the host alone (OpSchema::host_inputs).
  OpBuilder& host_inputs(std::vector<int> inputs) {
    s_->host_inputs = std::move(inputs);
    return *this;
  }
  // A plain-loop kernel the fast one is tested against.
  OpBuilder& reference(std::function<void(KernelCtx&, const A&)> fn) {
    s_->reference = Erase(std::move(fn));
    return *this;
  }
  OpBuilder& backward(std::function<TensorList(const GradCtx&, const A&)> fn) {
    s_->backward = [fn](const GradCtx& g, const void* a) {
      return fn(g, *static_cast<const A*>(a));
    };
    return *this;
  }
  // The backward reads outputs [0, n) even when the caller does not ask for them.
  OpBuilder& backward_outputs(int n) {
    s_->backward_outputs = n;
    return *this;
  }
  OpBuilder& nondeterministic() {
    s_->nondeterministic = true;
    return *this;
  }
  // Export hook: the op's ONNX form when it is not the recorded one.
  OpBuilder& to_onnx(std::function<void(ExportCtx&, const A&)> fn) {
    s_->to_onnx = [fn](ExportCtx& c, const void* a) { fn(c, *static_cast<const A*>(a)); };
    return *this;
  }
  // See OpSchema::expand.
  OpBuilder& expand(std::function<OpSchema::Expansion(const A&, const TensorList&)> fn) {
    s_->expand = [fn](const void* a, const TensorList& in) {
      return fn(*static_cast<const A*>(a), in);
    };
    return *this;
  }
  // See OpSchema::upgrade, changes_meaning and removed_in.
  OpBuilder& upgrade(std::function<void(ExportCtx&, const A&)> fn) {
    s_->upgrade = [fn](ExportCtx& c, const void* a) { fn(c, *static_cast<const A*>(a)); };
    return *this;
  }
  OpBuilder& state_inputs(std::vector<int> inputs) {
    s_->state_inputs = std::move(inputs);
    return *this;
  }
  OpBuilder& changes_meaning() {
    s_->changes_meaning = true;
    return *this;
  }
  OpBuilder& removed_in(int opset) {
    s_->removed_in = opset;
    return *this;
  }
  // The op on Values (see OpSchema::RunValues).
  OpBuilder& value_kernel(std::function<ValueList(const ValueCtx&, const A&)> fn) {
    s_->value_kernel = [fn](const ValueCtx& c, const void* a) {
      return fn(c, *static_cast<const A*>(a));
    };
    return *this;
  }
  // FLOPs of one application (OpSchema::flops).
  OpBuilder& flops(std::function<int64_t(const std::vector<Shape>&, const Shape&)> fn) {
    s_->flops = std::move(fn);
    return *this;
  }
  // Checks a model's node at import: fn(num_inputs, num_outputs, attrs, where).
  OpBuilder& validate(std::function<void(int, int, const A&, const std::string&)> fn) {
    s_->validate = [fn](int n_in, int n_out, const void* a, const std::string& where) {
      fn(n_in, n_out, *static_cast<const A*>(a), where);
    };
    return *this;
  }
  OpBuilder& alias(std::function<TensorList(const InferCtx&, const A&)> fn) {
    s_->alias = [fn](const InferCtx& c, const void* a) { return fn(c, *static_cast<const A*>(a)); };
    return *this;
  }

 private:
  using Setter = std::function<void(A&, const AttrValue&, const InferCtx&)>;
  using Getter = std::function<void(const A&, AttrMap&)>;
  using SetterMap = std::map<std::string, Setter, std::less<>>;
  static OpSchema::KernelFn Erase(std::function<void(KernelCtx&, const A&)> fn) {
    return [fn](KernelCtx& k, const void* a) { fn(k, *static_cast<const A*>(a)); };
  }
  std::unique_ptr<OpSchema> s_;
  SetterMap attr_setters_;
  std::vector<Getter> attr_getters_;
};

struct NoAttrs {};

// Shape inference for ops whose output 0 has input i's dtype and shape.
struct SameAsInput {
  int i = 0;
  explicit SameAsInput(int input) : i(input) {}
  template <class A>
  SpecList operator()(const InferCtx& c, const A&) const {
    return {{c.dtype(i), c.shape(i)}};
  }
};

// Holds nothing: constructing it from a finished builder expression ends
// that expression, whose temporary builder then registers the op.
struct OpRegistrar {
  template <class A>
  OpRegistrar(const OpBuilder<A>&) {}  // NOLINT: implicit by design
};

// Registers one op for several opset versions from one builder chain:
// build(builder, version) runs with since_opset already set and branches on
// the version where the spec changed between them (attributes, inputs).
//   [[maybe_unused]] const bool kPad = RegisterVersions<PadAttrs>(
//       "Pad", {2, 11}, [](OpBuilder<PadAttrs>& b, int v) { ... });
template <class A, class F>
bool RegisterVersions(std::string_view name, std::initializer_list<int> versions, F&& build) {
  for (int v : versions) {
    OpBuilder<A> b{std::string(name)};
    b.since_opset(v);
    build(b, v);
  }
  return true;
}

#define SINGA_OP_CONCAT_INNER(a, b) a##b
#define SINGA_OP_CONCAT(a, b) SINGA_OP_CONCAT_INNER(a, b)
// Registers an op at load time: SINGA_REGISTER_OP(Name, AttrsStruct).since_opset(..)...;
#define SINGA_REGISTER_OP(NAME, ATTRS)                                                         \
  [[maybe_unused]] static const ::singa::OpRegistrar SINGA_OP_CONCAT(singa_op_, __COUNTER__) = \
      ::singa::OpBuilder<ATTRS>(#NAME)

}  // namespace singa

namespace singa {
// Runs `schema` with typed attributes (free functions use this with a schema
// looked up once).
template <class A>
TensorList RunOp(const OpSchema& schema, std::span<const Tensor> inputs, A attrs,
                 int num_outputs = -1) {
  return schema.Run(inputs, std::make_shared<const A>(std::move(attrs)), num_outputs);
}
}  // namespace singa
