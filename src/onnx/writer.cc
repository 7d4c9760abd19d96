// sonnx::ToOnnx / SaveOnnx: traces the autograd records back from the
// outputs and writes them as an onnx.ModelProto (see singa/onnx/export.h).
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "onnx/proto.h"
#include "singa/core/file.h"
#include "singa/onnx/export.h"
#include "singa/ops/export_ctx.h"

namespace singa::sonnx {
namespace {

using autograd::Node;

constexpr int kOldestOpset = 11;

// The oldest IR version that can hold a model of this ai.onnx opset (onnx's
// VERSION_TABLE): runtimes accept an IR version up to what they know.
int64_t IrVersionFor(int opset) {
  if (opset <= 11) return 6;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  if (opset <= 22) return 10;
  if (opset <= 23) return 11;
  if (opset <= 24) return 12;
  return 13;
}

std::string Describe(const Tensor& t) {
  std::string s = t.ToString();
  if (!t.name().empty()) s = "'" + t.name() + "' " + s;
  return s;
}

void TensorToProto(const Tensor& value, const std::string& name, onnx::TensorProto* p) {
  p->set_name(name);
  p->set_data_type(static_cast<int>(value.dtype()));
  for (int64_t d : value.shape()) p->add_dims(d);
  const Tensor t = value.Contiguous();
  const int64_t n = t.numel();
  if (t.dtype() == DType::kString) {
    const std::string* s = t.data<std::string>();
    for (int64_t i = 0; i < n; ++i) p->add_string_data(s[i]);
    return;
  }
  std::string raw;
  if (n > 0) {
    const auto* src = static_cast<const char*>(t.raw_data());
    if (const int bits = PackedBits(t.dtype())) {
      // One value per byte in memory; 8 / bits per byte in ONNX, lowest
      // bits first.
      const int per_byte = 8 / bits;
      const int mask = (1 << bits) - 1;
      raw.assign(static_cast<size_t>((n * bits + 7) / 8), '\0');
      for (int64_t i = 0; i < n; ++i)
        raw[i / per_byte] |= static_cast<char>((src[i] & mask) << (i % per_byte * bits));
    } else {
      raw.assign(src, t.nbytes());
    }
  }
  p->set_raw_data(std::move(raw));
}

// Attribute values equal to their defaults are left out: ONNX then applies
// the same default, and sentinels (an empty kernel_shape: "from W") stay unsaid.
bool SameAttr(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, Tensor> || std::is_same_v<X, std::vector<Tensor>>)
          return false;  // tensor attributes are always written
        else
          return x == std::get<X>(b);
      },
      a);
}

void AttrToProto(const std::string& name, const AttrValue& v, onnx::AttributeProto* a,
                 const std::string& where) {
  using A = onnx::AttributeProto;
  a->set_name(name);
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, std::monostate>) {
          throw Error(where + ": attribute '" + name + "' has no value");
        } else if constexpr (std::is_same_v<X, int64_t>) {
          a->set_type(A::INT);
          a->set_i(x);
        } else if constexpr (std::is_same_v<X, float>) {
          a->set_type(A::FLOAT);
          a->set_f(x);
        } else if constexpr (std::is_same_v<X, std::string>) {
          a->set_type(A::STRING);
          a->set_s(x);
        } else if constexpr (std::is_same_v<X, Tensor>) {
          a->set_type(A::TENSOR);
          TensorToProto(x, "", a->mutable_t());
        } else if constexpr (std::is_same_v<X, std::vector<int64_t>>) {
          a->set_type(A::INTS);
          for (int64_t i : x) a->add_ints(i);
        } else if constexpr (std::is_same_v<X, std::vector<float>>) {
          a->set_type(A::FLOATS);
          for (float f : x) a->add_floats(f);
        } else if constexpr (std::is_same_v<X, std::vector<std::string>>) {
          a->set_type(A::STRINGS);
          for (const auto& s : x) a->add_strings(s);
        } else if constexpr (std::is_same_v<X, std::vector<Tensor>>) {
          a->set_type(A::TENSORS);
          for (const Tensor& t : x) TensorToProto(t, "", a->add_tensors());
        } else {
          throw UnsupportedOp(where + ": attribute '" + name +
                              "' is a graph of an imported model; graphs are not exported");
        }
      },
      v);
}

void SetValueInfo(const Tensor& t, const std::string& name, bool dynamic_batch,
                  onnx::ValueInfoProto* v) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int>(t.dtype()));
  auto* shape = tt->mutable_shape();
  for (int64_t i = 0; i < t.ndim(); ++i) {
    auto* d = shape->add_dim();
    if (dynamic_batch && i == 0)
      d->set_dim_param("batch");
    else
      d->set_dim_value(t.shape()[i]);
  }
}

// The version of `op` in effect at `opset` is the recorded one.
bool FormAt(const OpSchema& op, int opset) {
  return OpRegistry::Find(op.name, opset, op.domain) == &op &&
         (op.removed_in == 0 || opset < op.removed_in);
}

std::string Bare(std::string name) {
  while (!name.empty() && (name.back() == '?' || name.back() == '.')) name.pop_back();
  return name;
}

// Why a node recorded in `from`'s form cannot be written as `to` (a newer
// version) with the same attributes and inputs; "" when it can.
std::string UpgradeBlocker(const OpSchema& from, const OpSchema& to, int num_inputs,
                           const std::vector<std::string>& outputs_read) {
  for (const OpSchema* s : OpRegistry::All())
    if (s->name == from.name && s->domain == from.domain && s->changes_meaning &&
        s->since_version > from.since_version && s->since_version <= to.since_version)
      return "version " + std::to_string(s->since_version) + " changed its meaning";
  for (const AttrInfo& a : from.attrs) {
    const AttrInfo* b = to.find_attr(a.name);
    if (!b) return "has no attribute '" + a.name + "'";
    if (!SameAttr(a.default_value, b->default_value) || a.required != b->required)
      return "changed attribute '" + a.name + "'";
  }
  for (int i = 0; i < num_inputs; ++i) {
    const auto n = static_cast<size_t>(i);
    const std::string a = Bare(from.input_names[std::min(n, from.input_names.size() - 1)]);
    const std::string b =
        to.input_names.empty() ? "" : Bare(to.input_names[std::min(n, to.input_names.size() - 1)]);
    if (a != b) return "names input " + std::to_string(i) + " '" + b + "', not '" + a + "'";
  }
  if (num_inputs < to.min_inputs() || num_inputs > to.max_inputs())
    return "takes " + std::to_string(to.min_inputs()) + " to " + std::to_string(to.max_inputs()) +
           " inputs, not " + std::to_string(num_inputs);
  for (size_t i = 0; i < outputs_read.size(); ++i) {
    if (outputs_read[i].empty()) continue;
    if (static_cast<int>(i) >= to.max_outputs() ||
        Bare(from.output_names[std::min(i, from.output_names.size() - 1)]) !=
            Bare(to.output_names[std::min(i, to.output_names.size() - 1)]))
      return "has no output " + std::to_string(i) + " like the recorded one";
  }
  return "";
}

class Exporter;

class NodeCtx final : public ExportCtx {
 public:
  NodeCtx(Exporter& ex, const Node& node, std::vector<std::string> in, std::vector<std::string> out,
          bool upgrading = false)
      : ex_(ex), node_(node), in_(std::move(in)), out_(std::move(out)), upgrading_(upgrading) {}
  const OpSchema& op() const override { return *node_.op; }
  int opset() const override;
  bool training() const override;
  int num_inputs() const override { return node_.num_inputs; }
  const Tensor& input(int i) const override { return node_.inputs.at(i); }
  const std::string& input_name(int i) const override { return in_.at(i); }
  int num_outputs() const override { return node_.num_outputs; }
  const std::string& output_name(int i) const override { return out_.at(i); }
  AttrMap attrs() const override {
    AttrMap m;
    if (!node_.op->dump) return m;
    for (auto& [k, v] : node_.op->dump(node_.attrs.get())) {
      const AttrInfo* info = node_.op->find_attr(k);
      if (info && !info->required && SameAttr(v, info->default_value)) continue;
      m.emplace(k, v);
    }
    return m;
  }
  std::string AddConstant(const Tensor& value, std::string_view hint) override;
  std::string FreshName(std::string_view hint) override;
  void AddNode(const std::string& op_type, const std::vector<std::string>& inputs,
               const std::vector<std::string>& outputs, const AttrMap& attrs,
               const std::string& domain) override;
  void AddDefault() override;
  std::string where() const override {
    std::string s = node_.op->name;
    if (!node_.op->domain.empty()) s += " (domain " + node_.op->domain + ")";
    // Saved outputs exist until backward ran; after it the op's name must do.
    std::string made;
    for (int i = 0; i < node_.num_outputs; ++i) {
      const size_t k = static_cast<size_t>(node_.num_inputs + i);
      if (k < node_.saved.size() && node_.saved[k].defined())
        made += (made.empty() ? "" : ", ") + node_.saved[k].ToString();
    }
    return made.empty() ? s : s + " (making " + made + ")";
  }

 private:
  Exporter& ex_;
  const Node& node_;
  std::vector<std::string> in_, out_;
  bool upgrading_;  // an upgrade hook writes the target opset's form
};

class Exporter {
 public:
  Exporter(const TensorList& inputs, const TensorList& outputs, const ExportOptions& o)
      : inputs_(inputs), outputs_(outputs), o_(o) {}

  std::string Run() {
    SINGA_CHECK(!outputs_.empty(), ShapeError, "to_onnx: no output tensors given");
    SINGA_CHECK(
        o_.input_names.empty() || o_.input_names.size() == inputs_.size(), ShapeError,
        "to_onnx: " << o_.input_names.size() << " input names for " << inputs_.size() << " inputs");
    SINGA_CHECK(o_.output_names.empty() || o_.output_names.size() == outputs_.size(), ShapeError,
                "to_onnx: " << o_.output_names.size() << " output names for " << outputs_.size()
                            << " outputs");
    NameInputs();
    for (const Tensor& y : outputs_) resolved_outputs_.push_back(Resolve(y));
    Trace();
    ChooseOpset();
    NameOutputs();
    NameLeaves();
    for (const Node* n : order_) ExportNode(*n);
    AddOutputs();
    CheckInputsUsed();
    return Finish();
  }

  int opset() const { return opset_; }
  bool training() const { return o_.training; }

  std::string Fresh(std::string_view hint) {
    std::string base(hint.empty() ? "v" : hint);
    std::string name = base;
    for (int k = 1; taken_.count(name); ++k) name = base + "_" + std::to_string(k);
    taken_.insert(name);
    return name;
  }

  std::string AddConstant(const Tensor& value, std::string_view hint) {
    std::string name = Fresh(std::string(hint) + "_const");
    TensorToProto(value, name, graph_.add_initializer());
    return name;
  }

  void AddNode(const std::string& op_type, const std::vector<std::string>& inputs,
               const std::vector<std::string>& outputs, const AttrMap& attrs,
               const std::string& domain, const std::string& where) {
    onnx::NodeProto* n = graph_.add_node();
    n->set_name(Fresh(op_type + "_" + std::to_string(node_count_++)));
    n->set_op_type(op_type);
    if (!domain.empty()) n->set_domain(domain);
    std::vector<std::string> in = inputs;
    while (!in.empty() && in.back().empty()) in.pop_back();  // trailing absent inputs
    for (const auto& s : in) n->add_input(s);
    std::vector<std::string> out = outputs;
    while (!out.empty() && out.back().empty()) out.pop_back();
    for (const auto& s : out) n->add_output(s);
    for (auto& [k, v] : attrs) AttrToProto(k, v, n->add_attribute(), where);
    if (!CanonicalDomain(domain).empty()) extra_domains_.insert(domain);
  }

  void AddDefault(const NodeCtx& c, const Node& node) {
    const OpSchema& op = *node.op;
    SINGA_CHECK(op.domain != "ai.singa", UnsupportedOp,
                "to_onnx: " << c.where() << " is an internal singa op with no ONNX form");
    SINGA_CHECK(FormAt(op, DomainOpset(op.domain)), UnsupportedOp,
                "to_onnx: " << c.where() << " was recorded in its opset-" << op.since_version
                            << " form, which opset " << DomainOpset(op.domain)
                            << " does not have; export at an opset where it is in effect");
    std::vector<std::string> in, out;
    for (int i = 0; i < c.num_inputs(); ++i) in.push_back(c.input_name(i));
    for (int i = 0; i < c.num_outputs(); ++i) out.push_back(c.output_name(i));
    AddNode(op.name, in, out, c.attrs(), op.domain, c.where());
  }

 private:
  // ---- records that stand for others (OpSchema::expand) ----
  // t, or what stands for it: an expanded record's result is its
  // expansion's, an expansion's input stand-in is the record's input.
  const Tensor& Resolve(const Tensor& t) {
    const Tensor* r = &t;
    while (r->defined()) {
      if (auto it = alias_.find(r->id()); it != alias_.end()) {
        r = &it->second;
      } else if (const Node* c = r->creator().get(); c && c->op->expand) {
        r = &Expand(*c).at(r->output_index());
      } else {
        break;
      }
    }
    return *r;
  }

  const TensorList& Expand(const Node& n) {
    if (auto it = expanded_.find(&n); it != expanded_.end()) return it->second.outputs;
    OpSchema::Expansion e = n.op->expand(n.attrs.get(), n.inputs);
    SINGA_CHECK(e.inputs.size() == n.inputs.size() &&
                    e.outputs.size() == static_cast<size_t>(n.num_outputs),
                Error, "to_onnx: the expansion of " << n.op->name << " does not fit its record");
    for (size_t i = 0; i < e.inputs.size(); ++i)
      if (e.inputs[i].defined() && e.inputs[i].id() != n.inputs[i].id())
        alias_.emplace(e.inputs[i].id(), n.inputs[i]);
    return expanded_.emplace(&n, std::move(e)).first->second.outputs;
  }

  // ---- the trace ----
  void NameInputs() {
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const Tensor& t = inputs_[i];
      SINGA_CHECK(t.defined(), ShapeError, "to_onnx: input " << i << " is undefined");
      std::string name = !o_.input_names.empty() ? o_.input_names[i]
                         : !t.name().empty()     ? t.name()
                                                 : "input_" + std::to_string(i);
      SINGA_CHECK(!input_index_.count(t.id()), ShapeError,
                  "to_onnx: input " << i << " (" << Describe(t) << ") is given twice");
      Claim(name, "input " + std::to_string(i) + " " + Describe(t));
      input_index_[t.id()] = static_cast<int>(i);
      input_name_.push_back(name);
      input_blocks_[t.block().get()] = static_cast<int>(i);
    }
  }

  // A name given by the user or carried by a tensor: two different values
  // with one name are an error (generated names step aside instead).
  void Claim(const std::string& name, const std::string& what) {
    auto [it, fresh] = claimed_.emplace(name, what);
    SINGA_CHECK(
        fresh, ShapeError,
        "to_onnx: name clash: '" << name << "' names both " << it->second << " and " << what);
    taken_.insert(name);
  }

  // Nodes in dependency order (every node after the makers of its inputs);
  // leaves in first-use order.
  void Trace() {
    for (size_t i = 0; i < resolved_outputs_.size(); ++i) {
      const Tensor& y = resolved_outputs_[i];
      SINGA_CHECK(y.defined(), ShapeError, "to_onnx: output " << i << " is undefined");
      SINGA_CHECK(input_index_.count(y.id()) || y.creator() || y.stores_grad(), ShapeError,
                  "to_onnx: output " << i << " (" << Describe(y)
                                     << ") has no recorded history: it was not computed by "
                                        "ops from the given inputs, or with recording off "
                                        "(NoGradGuard; Python: set_recording(False))");
    }
    std::unordered_set<const Node*> seen;
    // Iterative post-order DFS: deep unrolled graphs (RNNs) must not overflow the stack.
    std::vector<std::pair<const Node*, size_t>> stack;
    auto visit_tensor = [&](const Tensor& t) -> const Node* {
      if (!t.defined() || input_index_.count(t.id())) return nullptr;
      if (const Node* c = t.creator().get()) return seen.insert(c).second ? c : nullptr;
      AddLeaf(t);
      return nullptr;
    };
    for (const Tensor& y : resolved_outputs_) {
      if (const Node* root = visit_tensor(y)) stack.emplace_back(root, 0);
      while (!stack.empty()) {
        auto& [n, next] = stack.back();
        if (next < n->inputs.size()) {
          const Node* c = visit_tensor(Resolve(n->inputs[next++]));
          if (c) stack.emplace_back(c, 0);
          continue;
        }
        order_.push_back(n);
        stack.pop_back();
      }
    }
    for (const Node* n : order_)
      for (const Tensor& given : n->inputs)
        if (const Tensor& t = Resolve(given); t.defined()) {
          if (auto it = input_index_.find(t.id()); it != input_index_.end())
            used_inputs_.insert(it->second);
          else if (t.creator())
            used_outputs_.insert({t.creator().get(), t.output_index()});
        }
    for (const Tensor& y : resolved_outputs_)
      if (auto it = input_index_.find(y.id()); it != input_index_.end())
        used_inputs_.insert(it->second);
  }

  void AddLeaf(const Tensor& t) {
    if (leaf_index_.count(t.id())) return;
    auto it = input_blocks_.find(t.block().get());
    SINGA_CHECK(it == input_blocks_.end(), ShapeError,
                "to_onnx: " << Describe(t) << " shares the storage of input " << it->second
                            << " but is not that tensor: it was derived from the input without "
                               "a recorded op (a Tensor method or a forward outside grad mode)");
    leaf_index_[t.id()] = static_cast<int>(leaves_.size());
    leaves_.push_back(t);
  }

  // The newest ai.onnx version any registered op has.
  static int NewestOpset() {
    static const int newest = [] {
      int v = kLatestOpset;
      for (const OpSchema* s : OpRegistry::All())
        if (s->domain.empty()) v = std::max(v, s->since_version);
      return v;
    }();
    return newest;
  }

  // Each other domain is written at the newest version among its recorded
  // ops; every op of that domain must keep its recorded form there.
  void ChooseDomainOpsets() {
    for (const Node* n : order_)
      if (!n->op->domain.empty() && n->op->domain != "ai.singa") {
        int& v = domain_opsets_[n->op->domain];
        v = std::max(v, n->op->since_version);
      }
    for (const Node* n : order_) {
      if (n->op->domain.empty() || n->op->domain == "ai.singa") continue;
      const int v = domain_opsets_[n->op->domain];
      SINGA_CHECK(FormAt(*n->op, v), UnsupportedOp,
                  "to_onnx: " << n->op->name << " was recorded in its " << n->op->domain
                              << " opset-" << n->op->since_version << " form, which opset " << v
                              << " of that domain (needed by its other ops) does not have");
    }
  }

  int DomainOpset(const std::string& domain) const {
    if (domain.empty()) return opset_;
    auto it = domain_opsets_.find(domain);
    return it == domain_opsets_.end() ? 1 : it->second;
  }

  void ChooseOpset() {
    ChooseDomainOpsets();
    if (o_.opset != 0) {
      SINGA_CHECK(o_.opset >= kOldestOpset && o_.opset <= NewestOpset(), UnsupportedOp,
                  "to_onnx: opset " << o_.opset << " is not supported; export targets opsets "
                                    << kOldestOpset << " to " << NewestOpset());
      opset_ = o_.opset;
      return;
    }
    // The newest opset at which every recorded op keeps its form, not above
    // kLatestOpset unless a recorded op only exists in a newer one.
    int top = kLatestOpset;
    for (const Node* n : order_)
      if (n->op->domain.empty()) top = std::max(top, n->op->since_version);
    for (int v = top; v >= kOldestOpset; --v) {
      bool ok = true;
      for (const Node* n : order_)
        if (n->op->domain.empty() && !FormAt(*n->op, v)) {
          ok = false;
          break;
        }
      if (ok) {
        opset_ = v;
        return;
      }
    }
    // No single opset has every recorded form (a model imported at an old
    // opset, maybe extended): the newest any recorded op needs, where the
    // older forms are upgraded (ExportNode).
    opset_ = kOldestOpset;
    for (const Node* n : order_)
      if (n->op->domain.empty()) opset_ = std::max(opset_, n->op->since_version);
  }

  // ---- names ----
  void NameOutputs() {
    for (size_t i = 0; i < resolved_outputs_.size(); ++i) {
      const Tensor& y = resolved_outputs_[i];
      std::string name = !o_.output_names.empty() ? o_.output_names[i]
                         : !y.name().empty() && !y.stores_grad() && !input_index_.count(y.id())
                             ? y.name()
                             : "output_" + std::to_string(i);
      Claim(name, "output " + std::to_string(i) + " " + Describe(y));
      output_name_.push_back(name);
      // A node output becomes the graph output directly, once; inputs,
      // leaves and repeats go through an Identity node.
      if (const Node* c = y.creator().get(); c && !input_index_.count(y.id())) {
        auto key = std::make_pair(c, y.output_index());
        if (!value_name_.count(key)) {
          value_name_[key] = name;
          used_outputs_.insert(key);
          continue;
        }
      }
      identity_outputs_.push_back(static_cast<int>(i));
    }
  }

  void NameLeaves() {
    int params = 0, consts = 0;
    for (const Tensor& t : leaves_) {
      std::string name;
      if (!t.name().empty()) {
        name = t.name();
        Claim(name, (t.stores_grad() ? "parameter " : "constant ") + Describe(t));
      } else {
        name = Fresh(t.stores_grad() ? "param_" + std::to_string(params++)
                                     : "const_" + std::to_string(consts++));
      }
      leaf_name_.push_back(name);
      TensorToProto(t, name, graph_.add_initializer());
    }
  }

  const std::string& NameOf(const Tensor& t) {
    static const std::string kAbsent;
    if (!t.defined()) return kAbsent;
    if (auto it = input_index_.find(t.id()); it != input_index_.end())
      return input_name_[it->second];
    if (const Node* c = t.creator().get()) return value_name_.at({c, t.output_index()});
    return leaf_name_[leaf_index_.at(t.id())];
  }

  // ---- nodes ----
  void ExportNode(const Node& n) {
    std::vector<std::string> in, out;
    for (const Tensor& t : n.inputs) in.push_back(NameOf(Resolve(t)));
    for (int i = 0; i < n.num_outputs; ++i) {
      auto key = std::make_pair(&n, i);
      if (auto it = value_name_.find(key); it != value_name_.end()) {
        out.push_back(it->second);
      } else if (used_outputs_.count(key)) {
        std::string name =
            Fresh(n.op->name + "_" + std::to_string(node_count_) + "_out" + std::to_string(i));
        value_name_[key] = name;
        out.push_back(name);
      } else {
        out.emplace_back();  // nothing reads it
      }
    }
    // Unread outputs before a read one still need a (unique) name.
    for (size_t i = 0; i < out.size(); ++i) {
      bool later = false;
      for (size_t j = i + 1; j < out.size(); ++j) later |= !out[j].empty();
      if (out[i].empty() && later)
        out[i] =
            Fresh(n.op->name + "_" + std::to_string(node_count_) + "_unused" + std::to_string(i));
    }
    const int opset = DomainOpset(n.op->domain);
    const OpSchema* target = OpRegistry::Find(n.op->name, opset, n.op->domain);
    const bool removed = n.op->removed_in && opset >= n.op->removed_in;
    if (FormAt(*n.op, opset) ||
        (!removed && (!target || target->since_version <= n.op->since_version))) {
      NodeCtx ctx(*this, n, std::move(in), std::move(out));
      if (n.op->to_onnx)
        n.op->to_onnx(ctx, n.attrs.get());
      else
        AddDefault(ctx, n);
      return;
    }
    Upgrade(n, *target, std::move(in), std::move(out));
  }

  // A node recorded in an older version's form than the target opset's:
  // through the op's upgrade hook, else re-parsed as the target version
  // where that version reads its attributes and inputs alike.
  void Upgrade(const Node& n, const OpSchema& target, std::vector<std::string> in,
               std::vector<std::string> out) {
    if (n.op->upgrade) {
      NodeCtx ctx(*this, n, std::move(in), std::move(out), /*upgrading=*/true);
      return n.op->upgrade(ctx, n.attrs.get());
    }
    NodeCtx recorded(*this, n, in, out);
    SINGA_CHECK(&target != n.op, UnsupportedOp,
                "to_onnx: " << recorded.where() << ": opset " << n.op->removed_in << " removed "
                            << n.op->name << " and no upgrade is known: export at an opset below "
                            << n.op->removed_in);
    const std::string why = UpgradeBlocker(*n.op, target, n.num_inputs, out);
    SINGA_CHECK(
        why.empty(), UnsupportedOp,
        "to_onnx: " << recorded.where() << " was recorded in its opset-" << n.op->since_version
                    << " form, and its opset-" << target.since_version
                    << " version (in effect at opset " << opset_ << ") " << why
                    << "; no upgrade is known"
                    << (target.since_version > kOldestOpset
                            ? ": export at an opset below " + std::to_string(target.since_version)
                            : std::string()));
    Node up;
    up.op = &target;
    up.inputs = n.inputs;
    up.saved = n.saved;
    up.num_inputs = n.num_inputs;
    up.num_outputs = n.num_outputs;
    up.released = true;
    up.attrs = target.ParseAttrs(recorded.attrs(), n.inputs, recorded.where());
    NodeCtx ctx(*this, up, std::move(in), std::move(out));
    if (target.to_onnx)
      target.to_onnx(ctx, up.attrs.get());
    else
      AddDefault(ctx, up);
  }

  void AddOutputs() {
    for (int i : identity_outputs_) {
      const Tensor& y = resolved_outputs_[i];
      AddNode("Identity", {NameOf(y)}, {output_name_[i]}, {}, "", "output " + std::to_string(i));
    }
    for (size_t i = 0; i < outputs_.size(); ++i)
      SetValueInfo(outputs_[i], output_name_[i], o_.dynamic_batch, graph_.add_output());
  }

  void CheckInputsUsed() {
    for (size_t i = 0; i < inputs_.size(); ++i)
      SINGA_CHECK(used_inputs_.count(static_cast<int>(i)), ShapeError,
                  "to_onnx: input " << i << " (" << Describe(inputs_[i])
                                    << ") is not used by the recorded history of the outputs: "
                                       "was the forward run on another tensor (a copy, or "
                                       "graph mode), or outside grad mode?");
  }

  std::string Finish() {
    onnx::ModelProto model;
    model.set_ir_version(IrVersionFor(opset_));
    model.set_producer_name("singa");
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset_);
    for (const auto& d : extra_domains_) {
      auto* o = model.add_opset_import();
      o->set_domain(d);
      o->set_version(DomainOpset(d));
    }
    graph_.set_name(o_.model_name);
    for (size_t i = 0; i < inputs_.size(); ++i)
      SetValueInfo(inputs_[i], input_name_[i], o_.dynamic_batch, graph_.add_input());
    *model.mutable_graph() = std::move(graph_);
    std::string bytes;
    SINGA_CHECK(model.ByteSizeLong() < (size_t{1} << 31), UnsupportedOp,
                "to_onnx: the model is " << model.ByteSizeLong()
                                         << " bytes; protobuf files are limited to 2 GB");
    SINGA_CHECK(model.SerializeToString(&bytes), Error, "to_onnx: serializing the model failed");
    return bytes;
  }

  struct PairHash {
    size_t operator()(const std::pair<const Node*, int>& p) const {
      return std::hash<const void*>()(p.first) * 31 + static_cast<size_t>(p.second);
    }
  };

  const TensorList& inputs_;
  const TensorList& outputs_;
  TensorList resolved_outputs_;
  const ExportOptions& o_;
  int opset_ = kLatestOpset;
  int node_count_ = 0;
  onnx::GraphProto graph_;
  std::unordered_map<const void*, int> input_index_;
  std::unordered_map<const void*, int> input_blocks_;
  std::vector<std::string> input_name_, output_name_, leaf_name_;
  std::unordered_map<const void*, int> leaf_index_;
  TensorList leaves_;
  std::vector<const Node*> order_;
  std::set<int> used_inputs_;
  std::unordered_set<std::pair<const Node*, int>, PairHash> used_outputs_;
  std::unordered_map<std::pair<const Node*, int>, std::string, PairHash> value_name_;
  std::vector<int> identity_outputs_;
  std::unordered_map<std::string, std::string> claimed_;
  std::unordered_set<std::string> taken_;
  std::set<std::string> extra_domains_;
  std::map<std::string, int> domain_opsets_;  // other domains' versions
  // Expanded records (kept alive here, so that the stand-ins' ids stay
  // theirs), and the stand-ins of their inputs.
  std::unordered_map<const Node*, OpSchema::Expansion> expanded_;
  std::unordered_map<const void*, Tensor> alias_;
};

int NodeCtx::opset() const { return ex_.opset(); }
bool NodeCtx::training() const { return ex_.training(); }
std::string NodeCtx::AddConstant(const Tensor& value, std::string_view hint) {
  return ex_.AddConstant(value, hint);
}
std::string NodeCtx::FreshName(std::string_view hint) { return ex_.Fresh(hint); }
void NodeCtx::AddNode(const std::string& op_type, const std::vector<std::string>& inputs,
                      const std::vector<std::string>& outputs, const AttrMap& attrs,
                      const std::string& domain) {
  // An export hook writing the op itself writes the recorded version's form.
  if (!upgrading_ && op_type == node_.op->name && domain == node_.op->domain)
    SINGA_CHECK(FormAt(*node_.op, opset()), UnsupportedOp,
                "to_onnx: " << where() << " was recorded in its opset-" << node_.op->since_version
                            << " form, which opset " << opset() << " does not have");
  ex_.AddNode(op_type, inputs, outputs, attrs, domain, where());
}
void NodeCtx::AddDefault() { ex_.AddDefault(*this, node_); }

}  // namespace

std::string ToOnnx(const TensorList& inputs, const TensorList& outputs,
                   const ExportOptions& options) {
  return Exporter(inputs, outputs, options).Run();
}

void SaveOnnx(const std::string& path, const TensorList& inputs, const TensorList& outputs,
              const ExportOptions& options) {
  // Everything that can fail for the model fails before the file is touched.
  const std::string bytes = ToOnnx(inputs, outputs, options);
  WriteFileAtomically(
      path, [&](std::FILE* f) { std::fwrite(bytes.data(), 1, bytes.size(), f); }, "SaveOnnx");
}

}  // namespace singa::sonnx
