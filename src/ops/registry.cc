// The op registry and the dispatcher every op call goes through.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <mutex>
#include <set>
#include <unordered_map>

#include "singa/core/cancel.h"
#include "singa/core/parallel.h"
#include "singa/ops/op.h"

namespace singa {

namespace {

thread_local KernelVariant t_variant = KernelVariant::kFast;

// "x?" and, for a variadic input that may be empty, "x?...".
bool IsOptionalName(const std::string& n) {
  return (!n.empty() && n.back() == '?') || n.ends_with("?...");
}
bool IsVariadicName(const std::string& n) { return n.size() > 3 && n.ends_with("..."); }
// An input or output name without its '?' / '...' marks.
std::string BareName(std::string name) {
  while (!name.empty() && (name.back() == '?' || name.back() == '.')) name.pop_back();
  return name;
}

struct Registry {
  std::mutex mu;
  // key: domain + "::" + name; versions sorted by since_version.
  std::unordered_map<std::string, std::vector<std::unique_ptr<OpSchema>>> ops;
};
Registry& TheRegistry() {
  static Registry* r = new Registry();  // never destroyed: schemas outlive static tensors
  return *r;
}
std::string Key(std::string_view domain, std::string_view name) {
  return CanonicalDomain(domain) + "::" + std::string(name);
}

// Throws `e` again as its own type (one of `Types`, else Error) with
// `where` (the op and its node) in front of the message, or in place of the
// op's name when the message starts with it: kernels know their op but not
// the node.
template <class... Types>
[[noreturn]] void RethrowAt(const Error& e, std::string_view op, const std::string& where) {
  std::string_view msg = e.what();
  const std::string prefix = std::string(op) + ": ";
  if (msg.starts_with(prefix)) msg.remove_prefix(prefix.size());
  const std::string text = where + ": " + std::string(msg);
  ((dynamic_cast<const Types*>(&e) ? throw Types(text) : void()), ...);
  throw Error(text);
}
[[noreturn]] void RethrowAt(const Error& e, std::string_view op, const std::string& where) {
  RethrowAt<InvalidModel, UnsupportedOp, ShapeError, DTypeError, IOError, MemoryError, Cancelled>(
      e, op, where);
}

struct FallbackLog {
  std::mutex mu;
  std::set<std::string> ops;
};
FallbackLog& TheFallbackLog() {
  static auto* f = new FallbackLog();
  return *f;
}

// A CPU kernel run for an op on a GPU: inputs copied to the host, outputs
// back. Reported on stderr once per op type.
OpSchema::KernelFn OnHost(const OpSchema::KernelFn& cpu, const std::string& op) {
  FallbackLog& f = TheFallbackLog();
  {
    std::lock_guard<std::mutex> lock(f.mu);
    if (f.ops.insert(op).second)
      std::fprintf(stderr,
                   "singa: %s has no CUDA kernel for these inputs; it runs on the CPU, with its "
                   "inputs and outputs copied (reported once per op)\n",
                   op.c_str());
  }
  return [cpu](KernelCtx& k, const void* attrs) {
    TensorList in, out;
    for (const Tensor& t : k.inputs) in.push_back(t.defined() ? t.ToDevice(Device::Cpu()) : t);
    for (const Tensor& t : k.outputs) out.emplace_back(t.shape(), t.dtype());
    KernelCtx host{in, out};
    cpu(host, attrs);
    for (size_t i = 0; i < out.size(); ++i) k.outputs[i].CopyFrom(out[i]);
  };
}

// A copy of an input on the op's device, with its values now even during a
// graph capture (shape inference may read them) and, in a capture, copied
// again on every replay (the source may have changed).
Tensor CopyTo(const Tensor& t, Device dev) {
  Tensor c(t.shape(), t.dtype(), dev);
  {
    CaptureSuspendGuard now(dev);
    c.CopyFrom(t);
  }
  if (dev.graph_enabled()) c.CopyFrom(t);
  return c;
}

// The device an op runs on: that of its first input on a GPU, else the CPU.
Device RunDevice(std::span<const Tensor> inputs) {
  for (const Tensor& t : inputs)
    if (t.defined() && t.device().type != DeviceType::kCpu) return t.device();
  return Device::Cpu();
}

}  // namespace

std::vector<std::string> OpRegistry::HostFallbacks() {
  FallbackLog& f = TheFallbackLog();
  std::lock_guard<std::mutex> lock(f.mu);
  return {f.ops.begin(), f.ops.end()};
}

KernelVariantGuard::KernelVariantGuard(KernelVariant v) : prev_(t_variant) { t_variant = v; }
KernelVariantGuard::~KernelVariantGuard() { t_variant = prev_; }
KernelVariant KernelVariantGuard::current() { return t_variant; }

const Tensor& InferCtx::input(int i) const {
  SINGA_CHECK(has_input(i), ShapeError, where() << ": input " << i << " is missing");
  return inputs_[i];
}

const Tensor& InferCtx::value(int i) const {
  const Tensor& t = input(i);
  // An empty input has no values: nothing can depend on them.
  if (reads_ && t.numel() > 0) reads_->blocks.push_back(internal::BlockOf(t).get());
  if (t.device().type == DeviceType::kCpu) return t;
  host_values_.push_back(std::make_unique<Tensor>(t.ToDevice(Device::Cpu())));
  return *host_values_.back();
}

std::string InferCtx::where() const {
  std::string s = op_.name;
  if (!node_.empty()) s += " (node '" + std::string(node_) + "')";
  return s;
}

std::string InferCtx::inputs_string() const {
  std::string s;
  for (int i = 0; i < num_inputs(); ++i) {
    if (i) s += ", ";
    s += BareName(i < static_cast<int>(op_.input_names.size()) ? op_.input_names[i]
                                                               : op_.input_names.back()) +
         ": " + (inputs_[i].defined() ? inputs_[i].ToString() : std::string("absent"));
  }
  return s;
}

int OpSchema::min_inputs() const {
  int n = 0;
  for (size_t i = 0; i < input_names.size(); ++i)
    if (!IsOptionalName(input_names[i])) n = static_cast<int>(i) + 1;
  return n;
}
int OpSchema::max_inputs() const {
  if (!input_names.empty() && IsVariadicName(input_names.back())) return INT_MAX;
  return static_cast<int>(input_names.size());
}
int OpSchema::min_outputs() const {
  int n = 0;
  for (size_t i = 0; i < output_names.size(); ++i)
    if (!IsOptionalName(output_names[i])) n = static_cast<int>(i) + 1;
  return n;
}
int OpSchema::max_outputs() const {
  if (!output_names.empty() && IsVariadicName(output_names.back())) return INT_MAX;
  return static_cast<int>(output_names.size());
}

const AttrInfo* OpSchema::find_attr(std::string_view attr) const {
  for (const AttrInfo& a : attrs)
    if (a.name == attr) return &a;
  return nullptr;
}

bool OpSchema::HostOnly(int i, const Tensor& t) const {
  return t.device().type == DeviceType::kCpu &&
         std::find(host_inputs.begin(), host_inputs.end(), i) != host_inputs.end();
}

void OpSchema::CheckInputs(const InferCtx& ctx) const {
  int n = ctx.num_inputs();
  SINGA_CHECK(
      n >= min_inputs() && n <= max_inputs(), ShapeError,
      ctx.where() << ": expects " << min_inputs()
                  << (max_inputs() == INT_MAX        ? std::string(" or more")
                      : max_inputs() == min_inputs() ? std::string()
                                                     : " to " + std::to_string(max_inputs()))
                  << " inputs, got " << n);
  for (int i = 0; i < n; ++i) {
    bool optional = i < static_cast<int>(input_names.size()) && IsOptionalName(input_names[i]);
    SINGA_CHECK(optional || ctx.has_input(i), ShapeError,
                ctx.where() << ": required input " << i << " is missing");
    if (ctx.has_input(i) && !HostOnly(i, ctx.input(i)))
      SINGA_CHECK(ctx.input(i).device() == ctx.input(0).device() || !ctx.has_input(0), ShapeError,
                  ctx.where() << ": inputs are on different devices");
  }
  for (const DTypeRule& rule : dtype_rules) {
    DType first = DType::kUndefined;
    for (int i : rule.inputs) {
      // A rule on a variadic input covers every input from there on.
      int last =
          (i == static_cast<int>(input_names.size()) - 1 && max_inputs() == INT_MAX) ? n - 1 : i;
      for (int j = i; j <= last && j < n; ++j) {
        if (!ctx.has_input(j)) continue;
        DType dt = ctx.dtype(j);
        SINGA_CHECK(std::find(rule.allowed.begin(), rule.allowed.end(), dt) != rule.allowed.end(),
                    DTypeError,
                    ctx.where() << ": dtype " << Name(dt) << " is not supported for input " << j
                                << " (" << ctx.inputs_string() << ")");
        SINGA_CHECK(
            first == DType::kUndefined || dt == first, DTypeError,
            ctx.where() << ": inputs must have the same dtype (" << ctx.inputs_string() << ")");
        first = dt;
      }
    }
  }
}

int OpSchema::ResolveNumOutputs(int requested, const InferCtx& ctx) const {
  if (requested < 0) return std::max(min_outputs(), 1);
  SINGA_CHECK(requested >= min_outputs() && requested <= max_outputs(), ShapeError,
              ctx.where() << ": " << requested << " outputs requested; the op has " << min_outputs()
                          << " to " << max_outputs());
  return requested;
}

std::shared_ptr<const void> OpSchema::ParseAttrs(const AttrMap& attrs,
                                                 std::span<const Tensor> inputs,
                                                 std::string_view node) const {
  InferCtx ctx(*this, inputs, -1, node);
  return parse(attrs, ctx);
}

SpecList OpSchema::Infer(std::span<const Tensor> inputs, const void* attrs, int num_outputs,
                         std::string_view node, ValueReads* reads) const {
  InferCtx probe(*this, inputs, -1, node);
  CheckInputs(probe);
  InferCtx ctx(*this, inputs, ResolveNumOutputs(num_outputs, probe), node, reads);
  SINGA_CHECK(infer, UnsupportedOp, ctx.where() << ": no shape inference registered");
  SpecList specs = infer(ctx, attrs);
  SINGA_CHECK(static_cast<int>(specs.size()) >= ctx.num_outputs(), ShapeError,
              ctx.where() << ": shape inference gave " << specs.size() << " outputs, "
                          << ctx.num_outputs() << " requested");
  specs.resize(ctx.num_outputs());
  return specs;
}

TensorList OpSchema::Run(std::span<const Tensor> given, const std::shared_ptr<const void>& attrs,
                         int num_outputs, std::string_view node, ValueReads* reads) const {
  // Inputs on another device than the op's are copied to it (a host
  // constant beside GPU tensors) unless only the host reads them; one
  // autograd tracks is an error instead, since its gradient would not reach
  // it.
  const Device dev = RunDevice(given);
  std::span<const Tensor> inputs = given;
  TensorList moved;
  for (size_t i = 0; i < given.size(); ++i) {
    const Tensor& t = given[i];
    if (!t.defined() || t.device() == dev) continue;
    if (HostOnly(static_cast<int>(i), t)) continue;
    SINGA_CHECK(!t.requires_grad(), ShapeError,
                InferCtx(*this, given, -1, node).where()
                    << ": input " << i << " is on " << t.device().ToString() << ", the op on "
                    << dev.ToString() << "; move it there first (Tensor.to_device)");
    if (moved.empty()) moved.assign(given.begin(), given.end());
    moved[i] = CopyTo(t, dev);
    inputs = moved;
  }
  InferCtx probe(*this, inputs, -1, node);
  CheckInputs(probe);
  const int requested = ResolveNumOutputs(num_outputs, probe);
  int computed = requested;
  if (backward_outputs > requested && GradEnabled() && backward &&
      std::any_of(inputs.begin(), inputs.end(),
                  [](const Tensor& t) { return t.defined() && t.requires_grad(); }))
    computed = backward_outputs;
  InferCtx ctx(*this, inputs, computed, node, reads);
  if (alias) {
    // An alias reads values through ctx as infer does; the copy it may make
    // (Reshape of a non-contiguous tensor) decides no shape and is no read.
    TensorList out = alias(ctx, attrs.get());
    out.resize(ctx.num_outputs());
    for (Tensor& t : out) t = t.Detach();  // a view is a new logical tensor
    internal::MaybeRecord(*this, attrs, inputs, out);
    return out;
  }
  SINGA_CHECK(infer, UnsupportedOp, ctx.where() << ": no shape inference registered");
  const SpecList specs = infer(ctx, attrs.get());
  SINGA_CHECK(static_cast<int>(specs.size()) >= ctx.num_outputs(), ShapeError,
              ctx.where() << ": shape inference gave " << specs.size() << " outputs, "
                          << ctx.num_outputs() << " requested");
  TensorList outputs;
  outputs.reserve(ctx.num_outputs());
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    try {
      // Strings live on the host.
      outputs.emplace_back(specs[i].shape, specs[i].dtype,
                           specs[i].dtype == DType::kString ? Device::Cpu() : dev);
    } catch (const Error& e) {  // a size that overflows or exceeds the limit
      RethrowAt(e, "Tensor", ctx.where() + ": output " + std::to_string(i));
    }
  }

  const KernelFn* fn = &kernel;
  if (t_variant == KernelVariant::kReference && reference) fn = &reference;
  SINGA_CHECK(*fn, UnsupportedOp, ctx.where() << ": no CPU kernel registered");
  KernelFn on_host;
  if (dev.type == DeviceType::kCuda) {
    if (t_variant == KernelVariant::kFast && CudaTakes(ctx, attrs.get())) {
      fn = &cuda_kernel;
    } else {
      on_host = OnHost(*fn, name);
      fn = &on_host;
    }
  }
  // Small work, and any work while other processes keep the cores busy,
  // runs on the calling thread alone (SerialScope, CpuContended).
  int64_t bytes = 0;
  for (const Tensor& t : inputs)
    if (t.defined()) bytes += static_cast<int64_t>(t.nbytes());
  for (const Tensor& t : outputs) bytes += static_cast<int64_t>(t.nbytes());
  const bool small = bytes < kSerialBytes;
  // Every kernel reaches the hardware through Device::Exec. While a graph is
  // captured the recorded closure must own what it reads; eagerly it runs at
  // once and borrows.
  // A model's node is named in its kernel's errors.
  if (dev.graph_enabled()) {
    TensorList in(inputs.begin(), inputs.end());
    dev.Exec(
        [fn = *fn, attrs, in, outputs, op = name,
         where = node.empty() ? std::string() : ctx.where(), small,
         state = std::shared_ptr<void>()]() mutable {
          KernelCtx k{in, outputs, &state};
          SerialScope scope(small || CpuContended());
          try {
            fn(k, attrs.get());
          } catch (const Error& e) {
            if (where.empty()) throw;
            RethrowAt(e, op, where);
          }
        },
        inputs, outputs);
  } else {
    dev.Exec(
        [&] {
          KernelCtx k{inputs, outputs};
          SerialScope scope(small || CpuContended());
          try {
            (*fn)(k, attrs.get());
          } catch (const Error& e) {
            if (node.empty()) throw;
            RethrowAt(e, name, ctx.where());
          }
        },
        inputs, outputs);
  }
  internal::MaybeRecord(*this, attrs, inputs, outputs);
  outputs.resize(requested);
  return outputs;
}

bool OpSchema::CudaTakes(const InferCtx& c, const void* attrs) const {
  if (!cuda_kernel) return false;
  if (c.num_inputs() > 0 && c.has_input(0) &&
      !std::count(cuda_dtypes.begin(), cuda_dtypes.end(), c.dtype(0)))
    return false;
  return !cuda_takes || cuda_takes(c, attrs);
}

void OpRegistry::Add(std::unique_ptr<OpSchema> schema) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto& versions = r.ops[Key(schema->domain, schema->name)];
  for (auto& v : versions)
    if (v->since_version == schema->since_version)
      throw Error("op " + schema->name + " registered twice for opset " +
                  std::to_string(schema->since_version));
  versions.push_back(std::move(schema));
  std::sort(versions.begin(), versions.end(),
            [](const auto& a, const auto& b) { return a->since_version < b->since_version; });
}

const OpSchema* OpRegistry::Find(std::string_view name, int opset, std::string_view domain) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.ops.find(Key(domain, name));
  if (it == r.ops.end()) return nullptr;
  const OpSchema* best = nullptr;
  for (auto& v : it->second)
    if (v->since_version <= opset) best = v.get();
  return best;
}

const OpSchema& OpRegistry::Get(std::string_view name, int opset, std::string_view domain) {
  const OpSchema* s = Find(name, opset, domain);
  if (!s) {
    const std::string d(DomainName(domain));
    if (const OpSchema* later = Find(name, kLatestOpset, domain)) {
      int first = later->since_version;
      for (const OpSchema* v : All())
        if (v->name == name && v->domain == later->domain)
          first = std::min(first, v->since_version);
      throw UnsupportedOp("op " + std::string(name) + " of domain " + d +
                          " is not implemented for opset " + std::to_string(opset) + ": " +
                          std::string(name) + " exists from opset " + std::to_string(first));
    }
    throw UnsupportedOp("op " + std::string(name) + " of domain " + d + " is not supported");
  }
  return *s;
}

std::vector<const OpSchema*> OpRegistry::All() {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<const OpSchema*> all;
  for (auto& [key, versions] : r.ops)
    for (auto& v : versions) all.push_back(v.get());
  std::sort(all.begin(), all.end(), [](const OpSchema* a, const OpSchema* b) {
    return std::tie(a->domain, a->name, a->since_version) <
           std::tie(b->domain, b->name, b->since_version);
  });
  return all;
}

TensorList CallOp(std::string_view name, std::span<const Tensor> inputs, const AttrMap& attrs,
                  int opset, int num_outputs) {
  const OpSchema& s = OpRegistry::Get(name, opset);
  return s.Run(inputs, s.ParseAttrs(attrs, inputs), num_outputs);
}

// ---- value kernels: ops over sequences and optionals, control flow ----------

namespace {

// "node 'at' (SequenceAt)", or the op's name for a call outside a model.
std::string NodeWhere(const OpSchema& op, std::string_view node) {
  if (node.empty()) return op.name;
  return "node '" + std::string(node) + "' (" + op.name + ")";
}

// The spec's name of input i ("input_sequence"), without its marks.
std::string InputName(const OpSchema& op, int i) {
  if (op.input_names.empty()) return "input " + std::to_string(i);
  return BareName(op.input_names[std::min<size_t>(i, op.input_names.size() - 1)]);
}

}  // namespace

const Value& ValueCtx::input(int i) const {
  static const Value kNone;
  return i < num_inputs() ? inputs_[i] : kNone;
}

const Tensor& ValueCtx::tensor(int i) const {
  SINGA_CHECK(has_input(i), ShapeError, where() << ": " << InputName(op_, i) << " is missing");
  SINGA_CHECK(
      !inputs_[i].is_sequence(), DTypeError,
      where() << ": " << InputName(op_, i) << " must be a tensor, got " << inputs_[i].ToString());
  return inputs_[i].tensor();
}

const TensorList& ValueCtx::sequence(int i) const {
  SINGA_CHECK(i < num_inputs() && inputs_[i].is_sequence(), DTypeError,
              where() << ": " << InputName(op_, i) << " must be a sequence, got "
                      << (i < num_inputs() ? inputs_[i].ToString() : std::string("none")));
  return inputs_[i].sequence();
}

std::string ValueCtx::where() const { return NodeWhere(op_, node_); }

ValueList ValueCtx::RunGraph(const Subgraph& graph, const ValueList& inputs,
                             std::string_view what) const {
  // Every iteration of Loop, Scan and SequenceMap runs a graph: a run can
  // be cancelled here, even a Loop without bound.
  CheckCancelled();
  SINGA_CHECK(scope_, UnsupportedOp,
              where() << ": its graph attributes run inside a model (sonnx.prepare)");
  SINGA_CHECK(static_cast<int>(inputs.size()) == graph.num_inputs(), InvalidModel,
              where() << " " << what << ": the graph takes " << graph.num_inputs() << " inputs, "
                      << inputs.size() << " given");
  const std::string at = where() + " " + std::string(what);
  try {
    return scope_->Run(graph, inputs, at);
  } catch (const Error& e) {
    RethrowAt(e, "", at);  // an error of the graph's nodes, named from the model's top
  }
}

std::vector<std::pair<Tensor, Tensor>> ValueCtx::Gradients(const Tensor& y) const {
  SINGA_CHECK(scope_, UnsupportedOp, where() << ": runs inside a model (sonnx.prepare)");
  return scope_->Gradients(y);
}

bool OpSchema::RunsOnValues(const AttrMap& attrs) const {
  if (!value_kernel) return false;
  if (!kernel && !alias) return true;
  return std::any_of(attrs.begin(), attrs.end(), [&](const auto& kv) {
    return std::holds_alternative<SubgraphPtr>(kv.second);
  });
}

ValueList OpSchema::RunValues(const ValueList& inputs, const std::shared_ptr<const void>& attrs,
                              bool on_values, int num_outputs, std::string_view node,
                              const GraphScope* scope, Device device, ValueReads* reads) const {
  const int n = static_cast<int>(inputs.size());
  // A sequence, or none where the op requires a tensor, is not for the tensor kernel.
  auto not_a_tensor = [&](int i) {
    return inputs[i].is_sequence() || (inputs[i].is_none() && i < min_inputs());
  };
  bool values = on_values;
  for (int i = 0; i < n && !values; ++i) values = value_kernel && not_a_tensor(i);
  if (values) {
    SINGA_CHECK(n <= max_inputs(), InvalidModel,
                NodeWhere(*this, node)
                    << ": " << n << " inputs; the op takes at most " << max_inputs());
    ValueCtx ctx(*this, inputs, num_outputs < 0 ? std::max(min_outputs(), 1) : num_outputs, node,
                 scope, device);
    ValueList out;
    try {
      out = value_kernel(ctx, attrs.get());
    } catch (const Error& e) {
      // Errors of the ops the kernel calls (Concat: ...) get the node in front.
      if (node.empty() || std::string_view(e.what()).starts_with(ctx.where())) throw;
      RethrowAt(e, "", ctx.where());
    }
    out.resize(ctx.num_outputs());
    return out;
  }
  TensorList tensors;
  tensors.reserve(n);
  for (int i = 0; i < n; ++i) {
    SINGA_CHECK(!inputs[i].is_sequence(), DTypeError,
                NodeWhere(*this, node)
                    << ": input " << i << " must be a tensor, got " << inputs[i].ToString());
    tensors.push_back(inputs[i].tensor());
  }
  TensorList out = Run(tensors, attrs, num_outputs, node, reads);
  return ValueList(out.begin(), out.end());
}

namespace attr_detail {
void TypeMismatch(const InferCtx& ctx, std::string_view attr, std::string_view want,
                  const AttrValue& got) {
  static const char* kinds[] = {"none", "int",    "float",   "string",  "tensor",
                                "ints", "floats", "strings", "tensors", "graph"};
  throw ShapeError(ctx.where() + ": attribute '" + std::string(attr) + "' expects " +
                   std::string(want) + ", got " + kinds[got.index()]);
}
}  // namespace attr_detail

}  // namespace singa
