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
#include "singa/onnx/inspect.h"
#include "singa/ops/tape.h"

namespace singa::sonnx {
namespace {

// IR version 3 (ONNX 1.0) introduced opset_import; older models have no
// per-domain opset to resolve ops with.
constexpr int64_t kMinIrVersion = 3;

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

// The schema a node resolves to at the model's opsets; null when none.
const OpSchema* SchemaOf(const onnx::NodeProto& n, const std::map<std::string, int>& opsets) {
  auto it = opsets.find(CanonicalDomain(n.domain()));
  return it == opsets.end()
             ? nullptr
             : OpRegistry::Find(n.op_type(), it->second, CanonicalDomain(n.domain()));
}

// The values a node reads from its graph: its inputs, then what its
// subgraphs read from outside themselves, then for an op with a cut graph
// (Gradient) the value it recomputes, so it comes after that value's nodes.
std::vector<std::string> NodeReads(const onnx::NodeProto& n,
                                   const std::map<std::string, int>& opsets) {
  std::vector<std::string> reads(n.input().begin(), n.input().end());
  if (const OpSchema* s = SchemaOf(n, opsets); s && s->cut_graph)
    for (const auto& a : n.attribute())
      if (a.name() == s->cut_graph->output) reads.push_back(a.s());
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

  // Collect mode (inspect): refused nodes go to `issues`, initializer data
  // is not read.
  void set_issues(std::vector<NodeIssue>* issues) { issues_ = issues; }

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
    MarkStateInputs();
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
    SINGA_CHECK(IsUtf8(name), InvalidModel,
                what << " name '" << Printable(name) << "' is not UTF-8");
    auto [it, fresh] = g_->slot_of.emplace(name, static_cast<int>(g_->slot_names.size()));
    SINGA_CHECK(fresh, InvalidModel, what << " '" << name << "' is defined twice in the graph");
    g_->slot_names.push_back(name);
    g_->constants.emplace_back();
    g_->producer.push_back(-1);
    return it->second;
  }

  // Initializers an op keeps as state (BatchNormalization's running
  // statistics) are buffers, not weights: never trained by their gradients.
  void MarkStateInputs() {
    for (const Node& n : g_->nodes) {
      if (!n.schema) continue;
      for (int i : n.schema->state_inputs) {
        if (i >= static_cast<int>(n.inputs.size()) || n.inputs[i] < 0) continue;
        Tensor& t = g_->constants[n.inputs[i]];
        if (t.defined() && t.stores_grad()) t.set_stores_grad(false).set_requires_grad(false);
      }
    }
  }

  void ReadInitializers(const onnx::GraphProto& gp) {
    for (int i = 0; i < gp.initializer_size(); ++i) {
      const onnx::TensorProto& init = gp.initializer(i);
      const std::string what = "initializer '" + init.name() + "'";
      int slot = NewSlot(init.name(), "initializer");
      if (issues_) continue;
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
      const std::vector<std::string> reads = NodeReads(gp.node(i), g_->opsets);
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

  // Adds one node; in collect mode (inspect) a node the importer refuses is
  // reported instead, and its outputs still become values of the graph, so
  // the nodes after it are checked too.
  void AddNode(const onnx::NodeProto& np, int file_index) {
    if (!issues_) return AddNodeOrThrow(np, file_index);
    try {
      AddNodeOrThrow(np, file_index);
    } catch (const Error& e) {
      issues_->push_back({prefix_ + Printable(NodeName(np, file_index)), Printable(np.op_type()),
                          Printable(DomainName(np.domain())), e.what(), !SchemaOf(np, g_->opsets)});
      for (const std::string& out : np.output())
        if (!out.empty() && !HasValue(out)) NewSlot(out, "output");
    }
  }

  void AddNodeOrThrow(const onnx::NodeProto& np, int file_index) {
    for (const std::string* s : {&np.name(), &np.op_type(), &np.domain()})
      SINGA_CHECK(IsUtf8(*s), InvalidModel,
                  "node " << file_index << ": its name, op type or domain '" << Printable(*s)
                          << "' is not UTF-8");
    Node node;
    node.name = NodeName(np, file_index);
    node.op_type = np.op_type();
    node.domain = CanonicalDomain(np.domain());
    const std::string where = g_->Where(node);

    int num_outputs = np.output_size();
    while (num_outputs > 0 && np.output(num_outputs - 1).empty()) --num_outputs;
    int num_inputs = np.input_size();
    while (num_inputs > 0 && np.input(num_inputs - 1).empty()) --num_inputs;

    auto opset = g_->opsets.find(node.domain);
    if (opset == g_->opsets.end()) {
      SINGA_CHECK(!OpRegistry::Find(node.op_type, kLatestOpset, node.domain), InvalidModel,
                  where << ": domain '" << DomainName(node.domain)
                        << "' is not in the model's opset_import");
      throw UnsupportedOp(where + ": op " + node.op_type + " of domain '" +
                          std::string(DomainName(node.domain)) + "' is not supported");
    }
    try {
      node.schema = &OpRegistry::Get(node.op_type, opset->second, node.domain);
    } catch (const UnsupportedOp& e) {
      throw UnsupportedOp(where + ": " + e.what());
    }
    const OpSchema& s = *node.schema;
    SINGA_CHECK(num_inputs >= s.min_inputs() && num_inputs <= s.max_inputs(), InvalidModel,
                where << ": " << num_inputs << " inputs; the op takes "
                      << Range(s.min_inputs(), s.max_inputs()));
    SINGA_CHECK(num_outputs >= s.min_outputs() && num_outputs <= s.max_outputs(), InvalidModel,
                where << ": " << num_outputs << " outputs; the op has "
                      << Range(s.min_outputs(), s.max_outputs()));

    AttrMap attrs;
    for (const auto& a : np.attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPH || (a.type() == 0 && a.has_g())) {
        const AttrInfo* info = s.find_attr(a.name());
        SINGA_CHECK(info, InvalidModel, where << ": unknown graph attribute '" << a.name() << "'");
        SINGA_CHECK(info->graph, InvalidModel,
                    where << ": attribute '" << a.name() << "' is a graph; the op takes another "
                          << "type there");
        attrs[a.name()] = ReadGraphAttr(a.g(), node.name + "/" + a.name() + "/", node);
        continue;
      }
      attrs[a.name()] = AttrFromProto(a, base_dir_, g_->device, where);
    }
    if (s.cut_graph) attrs[s.cut_graph->name] = CutGraph(*s.cut_graph, attrs, node, where);
    node.attrs = s.ParseAttrs(attrs, {}, node.name);
    node.on_values = s.RunsOnValues(attrs);
    if (s.validate) s.validate(num_inputs, num_outputs, node.attrs.get(), where);
    if (num_inputs == 0 && !node.on_values && node.outer_inputs.empty() && !s.nondeterministic)
      return FoldNode(np, node, num_outputs);
    AppendNode(np, std::move(node), num_inputs, num_outputs, where);
  }

  // A node without inputs (Constant) computes constants: it runs once here
  // and its outputs become constants of the graph, not a node.
  void FoldNode(const onnx::NodeProto& np, const Node& node, int num_outputs) {
    NoGradGuard no_grad;
    const TensorList outs = node.schema->Run({}, node.attrs, num_outputs, node.name);
    for (int i = 0; i < num_outputs; ++i)
      if (!np.output(i).empty())
        g_->constants[NewSlot(np.output(i), g_->Where(node) + ": output")] = outs[i];
  }

  // "2", "1 to 3" or "1 or more": an op's input or output count for messages.
  static std::string Range(int lo, int hi) {
    if (hi == lo) return std::to_string(lo);
    if (hi == std::numeric_limits<int>::max()) return std::to_string(lo) + " or more";
    return std::to_string(lo) + " to " + std::to_string(hi);
  }

  // Reads a graph attribute with this graph as the enclosing scope; the
  // values it reads from here become the node's outer inputs.
  SubgraphPtr ReadGraphAttr(const onnx::GraphProto& gp, const std::string& prefix, Node& node) {
    auto sub = std::make_shared<Graph>();
    sub->ir_version = g_->ir_version;
    sub->opsets = g_->opsets;
    sub->device = g_->device;
    Reader reader(gp, sub, base_dir_, this);
    reader.set_issues(issues_);
    reader.prefix_ = prefix_ + prefix;
    std::shared_ptr<Graph> read = reader.Read();
    std::vector<int> outer;
    for (const std::string& o : read->outer_names) outer.push_back(g_->slot_of.at(o));
    node.outer_inputs.insert(node.outer_inputs.end(), outer.begin(), outer.end());
    return std::make_shared<GraphAttr>(std::move(read), std::move(outer));
  }

  // An op's cut graph (OpSchema::CutGraph): the nodes of this graph that
  // compute the value named by attribute cut.output from the values named by
  // attributes cut.inputs (the graph's inputs, in that order); other values
  // it reads are this graph's.
  SubgraphPtr CutGraph(const OpSchema::CutGraph& cut, const AttrMap& attrs, Node& node,
                       const std::string& where) {
    onnx::GraphProto f;
    f.set_name(node.name + "/" + cut.output);
    std::set<std::string> leaves;
    for (const std::string& attr : cut.inputs) {
      auto it = attrs.find(attr);
      if (it == attrs.end()) continue;
      const auto* names = std::get_if<std::vector<std::string>>(&it->second);
      SINGA_CHECK(names, InvalidModel, where << ": attribute '" << attr << "' must be strings");
      for (const std::string& name : *names) {
        f.add_input()->set_name(name);
        leaves.insert(name);
      }
    }
    auto out = attrs.find(cut.output);
    SINGA_CHECK(out != attrs.end(), InvalidModel,
                where << ": required attribute '" << cut.output << "' is missing");
    const auto* y = std::get_if<std::string>(&out->second);
    SINGA_CHECK(y, InvalidModel, where << ": attribute '" << cut.output << "' must be a string");
    f.add_output()->set_name(*y);
    std::unordered_map<std::string, int> made_by;
    for (int i = 0; i < gp_.node_size(); ++i)
      for (const std::string& o : gp_.node(i).output()) made_by.emplace(o, i);
    std::vector<char> needed(gp_.node_size(), 0);
    std::vector<std::string> todo = {*y};
    while (!todo.empty()) {
      const std::string name = std::move(todo.back());
      todo.pop_back();
      auto it = made_by.find(name);
      if (leaves.count(name) || it == made_by.end() || needed[it->second]) continue;
      needed[it->second] = 1;
      for (const std::string& in : NodeReads(gp_.node(it->second), g_->opsets))
        if (!in.empty()) todo.push_back(in);
    }
    std::string from;
    for (const std::string& attr : cut.inputs) from += (from.empty() ? "" : " and ") + attr;
    SINGA_CHECK(made_by.count(*y) || leaves.count(*y), InvalidModel,
                where << ": " << cut.output << " '" << *y << "' is not computed from " << from);
    for (int i = 0; i < gp_.node_size(); ++i)
      if (needed[i]) *f.add_node() = gp_.node(i);
    return ReadGraphAttr(f, node.name + "/" + cut.name + "/", node);
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
  // Collect mode: where refused nodes are reported (null: throw), and the
  // path of the graph attribute being read ("if1/else_branch/").
  std::vector<NodeIssue>* issues_ = nullptr;
  std::string prefix_;
};

// `issues`: collect mode (CheckModel).
std::shared_ptr<Graph> ReadModel(onnx::ModelProto& m, Device device, const std::string& base_dir,
                                 std::vector<NodeIssue>* issues = nullptr) {
  SINGA_CHECK(m.ir_version() >= kMinIrVersion, InvalidModel,
              "the model's IR version is " << m.ir_version() << "; at least " << kMinIrVersion
                                           << " (ONNX 1.0) is required");
  SINGA_CHECK(m.has_graph(), InvalidModel, "the model has no graph");
  auto g = std::make_shared<Graph>();
  g->ir_version = m.ir_version();
  g->device = device;
  // A model may import only other domains (ai.onnx.ml, ...): each node's
  // domain is checked when the node is read.
  for (const auto& o : m.opset_import()) g->opsets[CanonicalDomain(o.domain())] = o.version();
  Reader reader(m.graph(), g, base_dir, nullptr, issues ? nullptr : m.mutable_graph());
  reader.set_issues(issues);
  return reader.Read();
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
    for (int s : g.nodes[i].outer_inputs) last[s] = i;
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

void CheckModel(onnx::ModelProto& m, const std::string& base_dir, std::vector<NodeIssue>& issues) {
  ReadModel(m, Device::Cpu(), base_dir, &issues);
}

std::shared_ptr<SingaRep> PrepareFromBytes(std::string_view bytes, Device device,
                                           const std::string& base_dir) {
  onnx::ModelProto model;
  ParseModel(bytes.size(), "the ONNX model bytes",
             [&] { return model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())); });
  return std::make_shared<SingaRep>(ReadModel(model, device, base_dir));
}

}  // namespace singa::sonnx
