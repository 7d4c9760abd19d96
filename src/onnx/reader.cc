// Prepare: ModelProto -> Graph (see graph.h). Everything that can be decided
// without input values happens here, once: version checks, value slots,
// initializers and Constant nodes, topological order, schema lookup with the
// model's opset and attribute parsing, and when each value can be dropped.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <queue>
#include <set>
#include <sstream>

#include "onnx/graph.h"
#include "onnx/proto.h"

namespace singa::sonnx {
namespace {

// IR version 3 (ONNX 1.0) introduced opset_import; older models have no
// per-domain opset to resolve ops with.
constexpr int64_t kMinIrVersion = 3;

std::string DomainKey(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }
// Values a graph reads but does not define (its subgraphs' too): they come
// from enclosing graphs.
void FreeNames(const onnx::GraphProto& gp, std::set<std::string>& out) {
  std::set<std::string> defined;
  for (const auto& v : gp.input()) defined.insert(v.name());
  for (const auto& v : gp.initializer()) defined.insert(v.name());
  for (const auto& n : gp.node())
    for (const std::string& o : n.output()) defined.insert(o);
  std::set<std::string> used;
  for (const auto& v : gp.output()) used.insert(v.name());
  for (const auto& n : gp.node()) {
    for (const std::string& i : n.input())
      if (!i.empty()) used.insert(i);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) FreeNames(a.g(), used);
      for (const auto& sub : a.graphs()) FreeNames(sub, used);
    }
  }
  for (const std::string& u : used)
    if (!defined.count(u)) out.insert(u);
}

bool IsGradient(const onnx::NodeProto& n) {
  return n.op_type() == "Gradient" && n.domain() == "ai.onnx.preview.training";
}

// The values a node reads from its graph: its inputs, then what its
// subgraphs read from outside themselves (Gradient: its y, which it
// recomputes, so it comes after y's nodes).
std::vector<std::string> NodeReads(const onnx::NodeProto& n) {
  std::vector<std::string> reads(n.input().begin(), n.input().end());
  if (IsGradient(n))
    for (const auto& a : n.attribute())
      if (a.name() == "y") reads.push_back(a.s());
  std::set<std::string> free;
  for (const auto& a : n.attribute()) {
    if (a.has_g()) FreeNames(a.g(), free);
    for (const auto& sub : a.graphs()) FreeNames(sub, free);
  }
  reads.insert(reads.end(), free.begin(), free.end());
  return reads;
}

class Reader {
 public:
  // `parent` reads the graph that encloses this one (null for the model's).
  // With `owned` (the same graph, mutable), initializer bytes are freed from
  // the proto as they are copied into tensors.
  Reader(const onnx::GraphProto& gp, std::shared_ptr<Graph> g, std::string base_dir,
         const Reader* parent, onnx::GraphProto* owned = nullptr)
      : gp_(gp), base_dir_(std::move(base_dir)), g_(std::move(g)), parent_(parent), owned_(owned) {}

  std::shared_ptr<Graph> Read() {
    const onnx::GraphProto& gp = gp_;
    SINGA_CHECK(gp.sparse_initializer_size() == 0, UnsupportedOp,
                "sparse initializer '" << gp.sparse_initializer(0).values().name()
                                       << "': sparse tensors are not supported");
    ReadInitializers(gp);
    ReadInputs(gp);
    const std::vector<int> order = TopologicalOrder(gp);
    for (int i : order) AddNode(gp.node(i), i);
    ReadOutputs(gp);
    PlanReleases(*g_);
    return g_;
  }

 private:
  // Whether `name` is a value of this graph at this point of reading it.
  bool HasValue(const std::string& name) const { return g_->slot_of.count(name) > 0; }

  // Links a node's inputs to their slots, gives its outputs new slots and
  // appends it to the graph (an empty name is an absent optional: -1).
  void AppendNode(const onnx::NodeProto& np, Node node, int num_inputs, int num_outputs,
                  const std::string& where) {
    const int index = static_cast<int>(g_->nodes.size());
    for (int i = 0; i < num_inputs; ++i)
      node.inputs.push_back(np.input(i).empty() ? -1 : g_->slot_of.at(np.input(i)));
    for (int i = 0; i < num_outputs; ++i) {
      if (np.output(i).empty()) {
        node.outputs.push_back(-1);
        continue;
      }
      int slot = NewSlot(np.output(i), where + ": output");
      g_->producer[slot] = index;
      node.outputs.push_back(slot);
    }
    g_->nodes.push_back(std::move(node));
  }

  int NewSlot(const std::string& name, const std::string& what) {
    SINGA_CHECK(!name.empty(), InvalidModel, what << " has an empty name");
    auto [it, fresh] = g_->slot_of.emplace(name, static_cast<int>(g_->slot_names.size()));
    SINGA_CHECK(fresh, InvalidModel, what << " '" << name << "' is defined twice in the graph");
    g_->slot_names.push_back(name);
    g_->constants.emplace_back();
    g_->producer.push_back(-1);
    return it->second;
  }

  void ReadInitializers(const onnx::GraphProto& gp) {
    for (int i = 0; i < gp.initializer_size(); ++i) {
      const onnx::TensorProto& init = gp.initializer(i);
      const std::string what = "initializer '" + init.name() + "'";
      int slot = NewSlot(init.name(), "initializer");
      Tensor t = TensorFromProto(init, base_dir_, g_->device, what);
      // The bytes now live in the tensor: free the proto's copy, so a model
      // is held once rather than twice while the rest is read.
      if (owned_) std::string().swap(*owned_->mutable_initializer(i)->mutable_raw_data());
      t.set_name(init.name());
      // Floating-point initializers are the weights: autograd reports their
      // gradients. Integer ones (shapes, indices) are not differentiable.
      if (IsFloat(t.dtype())) t.set_stores_grad(true);
      g_->constants[slot] = t;
      g_->params[init.name()] = t;
    }
  }

  void ReadInputs(const onnx::GraphProto& gp) {
    for (const auto& in : gp.input()) {
      auto it = g_->slot_of.find(in.name());
      if (it != g_->slot_of.end()) {
        // An input with an initializer (IR < 4 lists every initializer as an
        // input): the initializer is its default value.
        g_->shadowed_inputs.push_back(ValueInfoFromProto(in, "graph input"));
        g_->shadowed_slots.push_back(it->second);
        continue;
      }
      g_->inputs.push_back(ValueInfoFromProto(in, "graph input"));
      g_->input_slots.push_back(NewSlot(in.name(), "graph input"));
    }
  }

  // Kahn's algorithm, taking the ready node that comes first in the file, so
  // a file already in order keeps its order.
  std::vector<int> TopologicalOrder(const onnx::GraphProto& gp) {
    const int n = gp.node_size();
    std::unordered_map<std::string, int> made_by;
    for (int i = 0; i < n; ++i) {
      for (const std::string& out : gp.node(i).output()) {
        if (out.empty()) continue;
        SINGA_CHECK(!g_->slot_of.count(out), InvalidModel,
                    NodeWhere(gp, i)
                        << ": output '" << out << "' is also a graph input or initializer");
        auto [it, fresh] = made_by.emplace(out, i);
        SINGA_CHECK(fresh, InvalidModel,
                    "value '" << out << "' is produced by both " << NodeWhere(gp, it->second)
                              << " and " << NodeWhere(gp, i));
      }
    }
    std::vector<std::vector<int>> readers(n);
    std::vector<int> pending(n, 0);
    for (int i = 0; i < n; ++i) {
      std::set<int> deps;
      const std::vector<std::string> reads = NodeReads(gp.node(i));
      for (size_t r = 0; r < reads.size(); ++r) {
        const std::string& in = reads[r];
        if (in.empty()) continue;
        const bool explicit_input = static_cast<int>(r) < gp.node(i).input_size();
        auto it = made_by.find(in);
        if (it != made_by.end()) {
          deps.insert(it->second);
        } else if (!g_->slot_of.count(in)) {
          // A subgraph may read values of the graphs around it.
          SINGA_CHECK(parent_ && parent_->HasValue(in), InvalidModel,
                      NodeWhere(gp, i)
                          << (explicit_input ? ": input '" : ": its subgraph reads '") << in
                          << "', which is neither a graph input, an initializer "
                             "nor the output of a node");
          g_->outer_names.push_back(in);
          g_->outer_slots.push_back(NewSlot(in, "outer value"));
        }
      }
      pending[i] = static_cast<int>(deps.size());
      for (int d : deps) readers[d].push_back(i);
    }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (int i = 0; i < n; ++i)
      if (pending[i] == 0) ready.push(i);
    std::vector<int> order;
    while (!ready.empty()) {
      int i = ready.top();
      ready.pop();
      order.push_back(i);
      for (int r : readers[i])
        if (--pending[r] == 0) ready.push(r);
    }
    if (static_cast<int>(order.size()) < n) ReportCycle(gp, made_by, pending);
    return order;
  }

  // Every node left by Kahn's algorithm waits for another left node, so
  // walking back along waiting inputs must revisit a node: that loop is a cycle.
  [[noreturn]] void ReportCycle(const onnx::GraphProto& gp,
                                const std::unordered_map<std::string, int>& made_by,
                                const std::vector<int>& pending) {
    int start =
        static_cast<int>(std::find_if(pending.begin(), pending.end(), [](int p) { return p > 0; }) -
                         pending.begin());
    std::vector<int> path;
    std::vector<int> seen(gp.node_size(), -1);
    int cur = start;
    while (seen[cur] < 0) {
      seen[cur] = static_cast<int>(path.size());
      path.push_back(cur);
      for (const std::string& in : gp.node(cur).input()) {
        auto it = made_by.find(in);
        if (it != made_by.end() && pending[it->second] > 0) {
          cur = it->second;
          break;
        }
      }
    }
    // path[seen[cur]..] is the cycle, each node waiting for the next; print
    // it in data-flow order.
    std::vector<int> cycle(path.begin() + seen[cur], path.end());
    std::reverse(cycle.begin(), cycle.end());
    // Start at the node that comes first in the file: the message does not
    // depend on where the walk began.
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    std::ostringstream os;
    os << "the graph has a cycle: ";
    for (int i : cycle) os << NodeWhere(gp, i) << " -> ";
    os << NodeWhere(gp, cycle.front());
    throw InvalidModel(os.str());
  }

  static std::string NodeName(const onnx::NodeProto& n, int index) {
    return n.name().empty() ? n.op_type() + "#" + std::to_string(index) : n.name();
  }
  static std::string NodeWhere(const onnx::GraphProto& gp, int index) {
    const onnx::NodeProto& n = gp.node(index);
    return "node '" + NodeName(n, index) + "' (" + n.op_type() + ")";
  }

  void AddNode(const onnx::NodeProto& np, int file_index) {
    Node node;
    node.name = NodeName(np, file_index);
    node.op_type = np.op_type();
    node.domain = DomainKey(np.domain());
    const std::string where = g_->Where(node);

    int num_outputs = np.output_size();
    while (num_outputs > 0 && np.output(num_outputs - 1).empty()) --num_outputs;
    int num_inputs = np.input_size();
    while (num_inputs > 0 && np.input(num_inputs - 1).empty()) --num_inputs;

    if (node.op_type == "Constant" && node.domain.empty()) {
      FoldConstant(np, where);
      return;
    }
    if (node.domain.empty() && (node.op_type == "If" || node.op_type == "Loop" ||
                                node.op_type == "Scan" || node.op_type == "SequenceMap")) {
      AddControlFlow(np, std::move(node), num_inputs, num_outputs);
      return;
    }
    if (IsGradient(np)) {
      AddGradient(np, std::move(node), num_inputs, num_outputs);
      return;
    }
    if (node.domain == "ai.onnx.preview" && node.op_type == "FlexAttention" &&
        std::any_of(np.attribute().begin(), np.attribute().end(),
                    [](const onnx::AttributeProto& a) { return a.has_g(); })) {
      AddControlFlow(np, std::move(node), num_inputs, num_outputs);
      return;
    }

    auto opset = g_->opsets.find(node.domain);
    if (node.domain.empty() && opset != g_->opsets.end() &&
        (node.value_op = FindValueOp(node.op_type))) {
      SINGA_CHECK(opset->second >= node.value_op->since_version, UnsupportedOp,
                  where << ": " << node.op_type << " exists from opset "
                        << node.value_op->since_version << "; the model imports opset "
                        << opset->second);
      AddValueOp(np, std::move(node), num_inputs, num_outputs, where);
      return;
    }
    if (opset == g_->opsets.end()) {
      SINGA_CHECK(!OpRegistry::Find(node.op_type, kLatestOpset, node.domain), InvalidModel,
                  where << ": domain '" << DomainName(node.domain)
                        << "' is not in the model's opset_import");
      throw UnsupportedOp(where + ": op " + node.op_type + " of domain '" +
                          DomainName(node.domain) + "' is not supported");
    }
    try {
      node.schema = &OpRegistry::Get(node.op_type, opset->second, node.domain);
    } catch (const UnsupportedOp& e) {
      throw UnsupportedOp(where + ": " + e.what());
    }
    const OpSchema& s = *node.schema;
    SINGA_CHECK(num_inputs <= s.max_inputs(), InvalidModel,
                where << ": " << num_inputs << " inputs; the op takes at most " << s.max_inputs());
    SINGA_CHECK(num_outputs <= s.max_outputs(), InvalidModel,
                where << ": " << num_outputs << " outputs; the op has at most " << s.max_outputs());
    SINGA_CHECK(
        num_outputs >= s.min_outputs(), InvalidModel,
        where << ": " << num_outputs << " outputs; the op has at least " << s.min_outputs());

    AttrMap attrs;
    for (const auto& a : np.attribute())
      attrs[a.name()] = AttrFromProto(a, base_dir_, g_->device, where);
    node.attrs = s.ParseAttrs(attrs, {}, node.name);

    AppendNode(np, std::move(node), num_inputs, num_outputs, where);
  }

  // Sequence and optional ops: attributes kept as they are (Optional's
  // `type` only types its empty result: none).
  void AddValueOp(const onnx::NodeProto& np, Node node, int num_inputs, int num_outputs,
                  const std::string& where) {
    const ValueOp& op = *node.value_op;
    SINGA_CHECK(num_inputs >= op.min_inputs && num_inputs <= op.max_inputs, InvalidModel,
                where << ": " << num_inputs << " inputs; the op takes " << op.min_inputs
                      << (op.max_inputs == op.min_inputs ? std::string()
                          : op.max_inputs == std::numeric_limits<int>::max()
                              ? std::string(" or more")
                              : " to " + std::to_string(op.max_inputs)));
    SINGA_CHECK(num_outputs == 1, InvalidModel,
                where << ": " << num_outputs << " outputs; the op has one");
    for (const auto& a : np.attribute()) {
      if (node.op_type == "Optional" && a.name() == "type") continue;
      node.value_attrs[a.name()] = AttrFromProto(a, base_dir_, g_->device, where);
    }
    AppendNode(np, std::move(node), num_inputs, num_outputs, where);
  }

  // If, Loop, Scan, SequenceMap and FlexAttention with graph attributes:
  // their subgraphs are read with this graph as the enclosing scope; the
  // values they read from here become extra inputs.
  void AddControlFlow(const onnx::NodeProto& np, Node node, int num_inputs, int num_outputs) {
    const std::string where = g_->Where(node);
    auto imported = g_->opsets.find(node.domain);
    SINGA_CHECK(imported != g_->opsets.end(), InvalidModel,
                where << ": the model does not import the " << DomainName(node.domain) << " opset");
    const int opset = imported->second;
    if (node.op_type == "FlexAttention") {
      node.control = ControlFlow::kFlexAttention;
      SINGA_CHECK(num_inputs == 3 && num_outputs == 1, InvalidModel,
                  where << ": FlexAttention takes Q, K and V and gives Y; the node has "
                        << num_inputs << " inputs and " << num_outputs << " outputs");
    } else if (node.op_type == "If") {
      node.control = ControlFlow::kIf;
      SINGA_CHECK(num_inputs == 1, InvalidModel, where << ": If takes one input (cond)");
    } else if (node.op_type == "Loop") {
      node.control = ControlFlow::kLoop;
    } else if (node.op_type == "SequenceMap") {
      node.control = ControlFlow::kSequenceMap;
      SINGA_CHECK(opset >= 17, UnsupportedOp,
                  where << ": SequenceMap exists from opset 17; the model imports " << opset);
      SINGA_CHECK(num_inputs >= 1, InvalidModel, where << ": SequenceMap takes input_sequence");
    } else {
      node.control = ControlFlow::kScan;
      node.scan.batched = opset < 9;
    }
    std::map<std::string, const onnx::GraphProto*> graphs;
    for (const auto& a : np.attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPH || a.has_g()) {
        graphs[a.name()] = &a.g();
        continue;
      }
      AttrValue v = AttrFromProto(a, base_dir_, g_->device, where);
      auto ints = [&] {
        auto* p = std::get_if<std::vector<int64_t>>(&v);
        SINGA_CHECK(p, InvalidModel, where << ": attribute '" << a.name() << "' must be ints");
        return *p;
      };
      if (node.control == ControlFlow::kScan && a.name() == "num_scan_inputs") {
        auto* p = std::get_if<int64_t>(&v);
        SINGA_CHECK(p, InvalidModel, where << ": attribute 'num_scan_inputs' must be an int");
        node.scan.num_scan_inputs = *p;
      } else if (node.control == ControlFlow::kScan && a.name() == "scan_input_axes") {
        node.scan.input_axes = ints();
      } else if (node.control == ControlFlow::kScan &&
                 a.name() == (node.scan.batched ? "directions" : "scan_input_directions")) {
        node.scan.input_directions = ints();
      } else if (node.control == ControlFlow::kScan && a.name() == "scan_output_axes") {
        node.scan.output_axes = ints();
      } else if (node.control == ControlFlow::kScan && a.name() == "scan_output_directions") {
        node.scan.output_directions = ints();
      } else if (node.control == ControlFlow::kFlexAttention &&
                 (a.name() == "scale" || a.name() == "softmax_precision")) {
        node.value_attrs[a.name()] = std::move(v);
      } else {
        throw InvalidModel(where + ": unknown attribute '" + a.name() + "'");
      }
    }
    const std::vector<std::string> names =
        node.control == ControlFlow::kIf ? std::vector<std::string>{"then_branch", "else_branch"}
        : node.control == ControlFlow::kFlexAttention
            ? std::vector<std::string>{"score_mod", "prob_mod"}
            : std::vector<std::string>{"body"};
    for (const auto& [name, graph] : graphs)
      SINGA_CHECK(std::find(names.begin(), names.end(), name) != names.end(), InvalidModel,
                  where << ": unknown graph attribute '" << name << "'");
    for (const std::string& name : names) {
      auto it = graphs.find(name);
      if (it == graphs.end() && node.control == ControlFlow::kFlexAttention) {
        node.subgraphs.push_back(nullptr);  // optional
        node.outer_inputs.emplace_back();
        continue;
      }
      SINGA_CHECK(it != graphs.end(), InvalidModel,
                  where << ": graph attribute '" << name << "' is missing");
      auto sub = std::make_shared<Graph>();
      sub->ir_version = g_->ir_version;
      sub->opsets = g_->opsets;
      sub->device = g_->device;
      std::shared_ptr<Graph> read = Reader(*it->second, sub, base_dir_, this).Read();
      std::vector<int> outer;
      for (const std::string& o : read->outer_names) outer.push_back(g_->slot_of.at(o));
      node.outer_inputs.push_back(std::move(outer));
      node.subgraphs.push_back(std::move(read));
    }
    const Graph* body = node.subgraphs[0].get();  // null: FlexAttention without score_mod
    if (node.control == ControlFlow::kFlexAttention) {
      for (size_t i = 0; i < names.size(); ++i)
        SINGA_CHECK(
            !node.subgraphs[i] ||
                (node.subgraphs[i]->inputs.size() == 1 && node.subgraphs[i]->outputs.size() == 1),
            InvalidModel, where << ": " << names[i] << " must take one input and give one output");
    } else if (node.control == ControlFlow::kIf) {
      for (const auto& branch : node.subgraphs)
        SINGA_CHECK(static_cast<int>(branch->outputs.size()) >= num_outputs, InvalidModel,
                    where << ": a branch has " << branch->outputs.size() << " outputs, the node "
                          << num_outputs);
    } else if (node.control == ControlFlow::kLoop) {
      const int carried = std::max(num_inputs - 2, 0);
      SINGA_CHECK(body->inputs.size() == static_cast<size_t>(carried + 2) &&
                      body->outputs.size() >= static_cast<size_t>(carried + 1),
                  InvalidModel,
                  where << ": the body takes " << body->inputs.size() << " inputs and gives "
                        << body->outputs.size() << " outputs; with " << carried
                        << " loop-carried values it must take " << carried + 2
                        << " and give at least " << carried + 1);
    } else if (node.control == ControlFlow::kSequenceMap) {
      SINGA_CHECK(body->inputs.size() == static_cast<size_t>(num_inputs) &&
                      body->outputs.size() >= static_cast<size_t>(num_outputs),
                  InvalidModel,
                  where << ": the body takes " << body->inputs.size() << " inputs and gives "
                        << body->outputs.size() << " outputs; the node has " << num_inputs
                        << " inputs and " << num_outputs << " outputs");
    } else {
      // Scan-8's first input, sequence_lens, is not passed to the body.
      const int body_inputs = num_inputs - (node.scan.batched ? 1 : 0);
      const int64_t m = node.scan.num_scan_inputs;
      SINGA_CHECK(
          m >= 1 && m <= body_inputs, InvalidModel,
          where << ": num_scan_inputs " << m << " for " << body_inputs << " state and scan inputs");
      SINGA_CHECK(body->inputs.size() == static_cast<size_t>(body_inputs), InvalidModel,
                  where << ": the body takes " << body->inputs.size() << " inputs, the node gives "
                        << body_inputs);
    }
    AppendNode(np, std::move(node), num_inputs, num_outputs, where);
  }

  // Gradient (ai.onnx.preview.training 1): the nodes that compute y from
  // xs and zs become its subgraph (inputs xs then zs, output y; other values
  // it reads are the enclosing graph's), which it re-runs on its inputs with
  // the xs as leaves of the tape.
  void AddGradient(const onnx::NodeProto& np, Node node, int num_inputs, int num_outputs) {
    const std::string where = g_->Where(node);
    SINGA_CHECK(g_->opsets.count(node.domain), InvalidModel,
                where << ": the model does not import the ai.onnx.preview.training opset");
    std::vector<std::string> xs, zs;
    std::string y;
    for (const auto& a : np.attribute()) {
      if (a.name() == "xs" || a.name() == "zs") {
        SINGA_CHECK(a.type() == onnx::AttributeProto::STRINGS, InvalidModel,
                    where << ": attribute '" << a.name() << "' must be strings");
        (a.name() == "xs" ? xs : zs).assign(a.strings().begin(), a.strings().end());
      } else if (a.name() == "y") {
        SINGA_CHECK(a.type() == onnx::AttributeProto::STRING, InvalidModel,
                    where << ": attribute 'y' must be a string");
        y = a.s();
      } else {
        throw InvalidModel(where + ": unknown attribute '" + a.name() + "'");
      }
    }
    SINGA_CHECK(!xs.empty() && !y.empty(), InvalidModel,
                where << ": attributes 'xs' and 'y' are required");
    SINGA_CHECK(num_inputs == static_cast<int>(xs.size() + zs.size()), InvalidModel,
                where << ": takes one input per name of xs and zs (" << xs.size() + zs.size()
                      << "), the node has " << num_inputs);
    SINGA_CHECK(num_outputs <= static_cast<int>(xs.size()), InvalidModel,
                where << ": gives one output per name of xs (" << xs.size() << "), the node has "
                      << num_outputs);
    node.control = ControlFlow::kGradient;
    node.num_xs = static_cast<int>(xs.size());

    onnx::GraphProto f;
    f.set_name(node.name + "/y");
    std::set<std::string> leaves;
    for (const auto* names : {&xs, &zs})
      for (const std::string& name : *names) {
        f.add_input()->set_name(name);
        leaves.insert(name);
      }
    f.add_output()->set_name(y);
    std::unordered_map<std::string, int> made_by;
    for (int i = 0; i < gp_.node_size(); ++i)
      for (const std::string& out : gp_.node(i).output()) made_by.emplace(out, i);
    std::vector<char> needed(gp_.node_size(), 0);
    std::vector<std::string> todo = {y};
    while (!todo.empty()) {
      const std::string name = std::move(todo.back());
      todo.pop_back();
      auto it = made_by.find(name);
      if (leaves.count(name) || it == made_by.end() || needed[it->second]) continue;
      needed[it->second] = 1;
      for (const std::string& in : NodeReads(gp_.node(it->second)))
        if (!in.empty()) todo.push_back(in);
    }
    SINGA_CHECK(made_by.count(y) || leaves.count(y), InvalidModel,
                where << ": y '" << y << "' is not computed from xs and zs");
    for (int i = 0; i < gp_.node_size(); ++i)
      if (needed[i]) *f.add_node() = gp_.node(i);
    auto sub = std::make_shared<Graph>();
    sub->ir_version = g_->ir_version;
    sub->opsets = g_->opsets;
    sub->device = g_->device;
    std::shared_ptr<Graph> read = Reader(f, sub, base_dir_, this).Read();
    std::vector<int> outer;
    for (const std::string& o : read->outer_names) outer.push_back(g_->slot_of.at(o));
    node.outer_inputs.push_back(std::move(outer));
    node.subgraphs.push_back(std::move(read));
    AppendNode(np, std::move(node), num_inputs, num_outputs, where);
  }

  void FoldConstant(const onnx::NodeProto& np, const std::string& where) {
    SINGA_CHECK(
        np.attribute_size() == 1, InvalidModel,
        where << ": a Constant needs exactly one attribute, it has " << np.attribute_size());
    SINGA_CHECK(np.output_size() == 1 && !np.output(0).empty(), InvalidModel,
                where << ": a Constant has one output");
    const auto& a = np.attribute(0);
    AttrValue v = AttrFromProto(a, base_dir_, g_->device, where);
    const std::string& kind = a.name();
    try {
      int slot = NewSlot(np.output(0), where + ": output");
      g_->constants[slot] = ConstantValue(kind, v, where);
    } catch (const std::bad_variant_access&) {
      throw InvalidModel(where + ": attribute '" + kind + "' has the wrong type");
    }
  }

  Tensor ConstantValue(const std::string& kind, const AttrValue& v, const std::string& where) {
    Tensor t;
    if (kind == "value") {
      t = std::get<Tensor>(v);
    } else if (kind == "value_float") {
      t = Tensor::Scalar<float>(std::get<float>(v), g_->device);
    } else if (kind == "value_int") {
      t = Tensor::Scalar<int64_t>(std::get<int64_t>(v), g_->device);
    } else if (kind == "value_floats") {
      auto& f = std::get<std::vector<float>>(v);
      t = Tensor::FromVector<float>({static_cast<int64_t>(f.size())}, f, g_->device);
    } else if (kind == "value_ints") {
      auto& f = std::get<std::vector<int64_t>>(v);
      t = Tensor::FromVector<int64_t>({static_cast<int64_t>(f.size())}, f, g_->device);
    } else if (kind == "value_string") {
      t = Tensor::Scalar<std::string>(std::get<std::string>(v), g_->device);
    } else if (kind == "value_strings") {
      auto& f = std::get<std::vector<std::string>>(v);
      t = Tensor::FromVector<std::string>({static_cast<int64_t>(f.size())}, f, g_->device);
    } else {
      throw UnsupportedOp(where + ": Constant attribute '" + kind + "' is not supported");
    }
    return t;
  }

  void ReadOutputs(const onnx::GraphProto& gp) {
    for (const auto& out : gp.output()) {
      auto it = g_->slot_of.find(out.name());
      if (it == g_->slot_of.end() && parent_ && parent_->HasValue(out.name())) {
        // A subgraph may return a value of an enclosing graph as it is.
        g_->outer_names.push_back(out.name());
        g_->outer_slots.push_back(NewSlot(out.name(), "outer value"));
        it = g_->slot_of.find(out.name());
      }
      SINGA_CHECK(it != g_->slot_of.end(), InvalidModel,
                  "graph output '" << out.name() << "' is not produced by any node");
      g_->outputs.push_back(ValueInfoFromProto(out, "graph output"));
      g_->output_slots.push_back(it->second);
    }
  }

  const onnx::GraphProto& gp_;
  std::string base_dir_;
  std::shared_ptr<Graph> g_;
  const Reader* parent_;
  onnx::GraphProto* owned_;
};

std::shared_ptr<Graph> ReadModel(onnx::ModelProto& m, Device device, const std::string& base_dir) {
  SINGA_CHECK(m.ir_version() >= kMinIrVersion, InvalidModel,
              "the model's IR version is " << m.ir_version() << "; at least " << kMinIrVersion
                                           << " (ONNX 1.0) is required");
  SINGA_CHECK(m.has_graph(), InvalidModel, "the model has no graph");
  auto g = std::make_shared<Graph>();
  g->ir_version = m.ir_version();
  g->device = device;
  // A model may import only other domains (ai.onnx.ml, ...): each node's
  // domain is checked when the node is read.
  for (const auto& o : m.opset_import()) g->opsets[DomainKey(o.domain())] = o.version();
  return Reader(m.graph(), g, base_dir, nullptr, m.mutable_graph()).Read();
}

// Runs `parse` (which fills a ModelProto) unless `size` is past protobuf's
// limit; either failure names `source`.
template <class Parse>
void ParseModel(size_t size, const std::string& source, Parse&& parse) {
  SINGA_CHECK(size <= static_cast<size_t>(INT32_MAX), IOError,
              source << ": " << size
                     << " bytes; protobuf reads at most 2 GiB (keep the "
                        "weights in external data)");
  SINGA_CHECK(parse(), InvalidModel,
              source << " is not a valid ONNX model (the protobuf does not parse: truncated or "
                        "corrupt)");
}

}  // namespace

void PlanReleases(Graph& g) {
  const int n = static_cast<int>(g.nodes.size());
  std::vector<int> last(g.slot_names.size(), -1);
  for (int i = 0; i < n; ++i) {
    for (int s : g.nodes[i].inputs)
      if (s >= 0) last[s] = i;
    for (const auto& outer : g.nodes[i].outer_inputs)
      for (int s : outer) last[s] = i;
    for (int s : g.nodes[i].outputs)
      if (s >= 0 && last[s] < i) last[s] = i;
  }
  for (int s : g.output_slots) last[s] = -1;
  g.release_after.assign(n, {});
  for (size_t s = 0; s < last.size(); ++s)
    if (last[s] >= 0 && !g.constants[s].defined()) g.release_after[last[s]].push_back(s);
}

std::shared_ptr<SingaRep> Prepare(const std::string& path, Device device) {
  std::error_code ec;
  SINGA_CHECK(!std::filesystem::is_directory(path, ec), IOError,
              "cannot read ONNX model '" << path << "': it is a directory");
  // Parsed straight from the file: no copy of the whole file in memory
  // beside the ModelProto (for BERT-base, 440 MB less at the peak).
  onnx::ModelProto model;
  {
    struct File {
      int fd;
      ~File() {
        if (fd >= 0) ::close(fd);
      }
    } file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    SINGA_CHECK(file.fd >= 0, IOError,
                "cannot open ONNX model '" << path << "': " << std::strerror(errno));
    struct stat st {};
    const size_t size = ::fstat(file.fd, &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
    ParseModel(size, "ONNX model '" + path + "'",
               [&] { return model.ParseFromFileDescriptor(file.fd); });
  }
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return std::make_shared<SingaRep>(ReadModel(model, device, dir.empty() ? "." : dir.string()));
}

std::shared_ptr<SingaRep> PrepareFromBytes(std::string_view bytes, Device device,
                                           const std::string& base_dir) {
  onnx::ModelProto model;
  ParseModel(bytes.size(), "the ONNX model bytes",
             [&] { return model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())); });
  return std::make_shared<SingaRep>(ReadModel(model, device, base_dir));
}

}  // namespace singa::sonnx
