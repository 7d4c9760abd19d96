// TreeEnsemble (ai.onnx.ml opset 5): each row of X [N, F] walks every tree
// from its root (tree_roots) down to a leaf; the leaf's weight goes to its
// target, aggregated over the trees (SUM, AVERAGE, MIN, MAX), then
// post_transform maps each row of Y [N, n_targets].
// https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsemble.html
//
// An interior node compares X[row, feature] with its split (modes LEQ, LT,
// GTE, GT, EQ, NEQ) or tests membership in its set (MEMBER: the sets are
// membership_values, NaN-delimited, in the order of the MEMBER nodes); a NaN
// feature takes the true branch when nodes_missing_value_tracks_true says so.
// Choices where the spec is silent, as in onnxruntime:
//   - a target no leaf reached is 0 under MIN and MAX too (onnx's reference
//     leaves the dtype's max/lowest there);
//   - n_targets, when absent, is one more than the largest leaf_targetids.
// post_transform follows the spec's numbering (1 SOFTMAX, 2 LOGISTIC), which
// onnxruntime 1.32 swaps; onnx's reference ignores the attribute.
// Trees are checked once per call: every node and leaf index in range, no
// node reachable from itself (a cycle would never reach a leaf).
#include <cmath>
#include <limits>
#include <numbers>

#include "ops/common.h"

namespace singa {
namespace {

struct TreeEnsembleAttrs {
  int64_t aggregate_function = 1;
  std::optional<Tensor> leaf_weights;
  std::vector<int64_t> leaf_targetids;
  std::optional<Tensor> membership_values;
  std::optional<int64_t> n_targets;
  std::vector<int64_t> nodes_falseleafs;
  std::vector<int64_t> nodes_falsenodeids;
  std::vector<int64_t> nodes_featureids;
  std::optional<Tensor> nodes_hitrates;
  std::vector<int64_t> nodes_missing_value_tracks_true;
  std::optional<Tensor> nodes_modes;
  std::optional<Tensor> nodes_splits;
  std::vector<int64_t> nodes_trueleafs;
  std::vector<int64_t> nodes_truenodeids;
  int64_t post_transform = 0;
  std::vector<int64_t> tree_roots;
};

enum Mode : int64_t { kLeq, kLt, kGte, kGt, kEq, kNeq, kMember };
enum Aggregate : int64_t { kAverage, kSum, kMin, kMax };
enum Transform : int64_t { kNone, kSoftmax, kLogistic, kSoftmaxZero, kProbit };

// A branch: a node index (>= 0) or a leaf index l encoded as ~l (< 0).
struct Node {
  int64_t mode, feature;
  double split;
  std::vector<double> members;
  int64_t if_true, if_false;
  bool missing_true;
};

struct Forest {
  std::vector<Node> nodes;
  std::vector<int64_t> roots;
  std::vector<double> weights;
  std::vector<int64_t> targets;
  int64_t n_targets = 0;
  int64_t max_feature = -1;
};

std::vector<double> Doubles(const Tensor& t) {
  return t.AsType(DType::kFloat64).Contiguous().ToVector<double>();
}

Forest Build(const TreeEnsembleAttrs& a, const std::string& where) {
  SINGA_CHECK(a.nodes_modes && a.nodes_splits && a.leaf_weights, ShapeError,
              where << ": the required attributes nodes_modes, nodes_splits and leaf_weights "
                       "must be set");
  for (const auto* t : {&a.nodes_modes, &a.nodes_splits, &a.leaf_weights})
    SINGA_CHECK((*t)->defined() && (*t)->ndim() == 1, ShapeError,
                where << ": nodes_modes, nodes_splits and leaf_weights must be 1-D tensors");
  const DType split_dt = a.nodes_splits->dtype(), weight_dt = a.leaf_weights->dtype();
  for (DType dt : {split_dt, weight_dt})
    SINGA_CHECK(dt == DType::kFloat32 || dt == DType::kFloat64 || dt == DType::kFloat16, DTypeError,
                where << ": nodes_splits and leaf_weights must be float tensors, got " << Name(dt));
  SINGA_CHECK(
      a.nodes_modes->dtype() == DType::kUInt8, DTypeError,
      where << ": nodes_modes must be a uint8 tensor, got " << Name(a.nodes_modes->dtype()));
  const size_t n = a.nodes_featureids.size();
  auto check_len = [&](size_t len, const char* name) {
    SINGA_CHECK(len == n, ShapeError,
                where << ": " << name << " has " << len << " entries, nodes_featureids " << n
                      << "; every nodes_* attribute needs one per node");
  };
  check_len(a.nodes_modes->numel(), "nodes_modes");
  check_len(a.nodes_splits->numel(), "nodes_splits");
  check_len(a.nodes_truenodeids.size(), "nodes_truenodeids");
  check_len(a.nodes_falsenodeids.size(), "nodes_falsenodeids");
  check_len(a.nodes_trueleafs.size(), "nodes_trueleafs");
  check_len(a.nodes_falseleafs.size(), "nodes_falseleafs");
  if (!a.nodes_missing_value_tracks_true.empty())
    check_len(a.nodes_missing_value_tracks_true.size(), "nodes_missing_value_tracks_true");
  if (a.nodes_hitrates) check_len(a.nodes_hitrates->numel(), "nodes_hitrates");

  Forest f;
  f.weights = Doubles(*a.leaf_weights);
  f.targets = a.leaf_targetids;
  const int64_t leaves = static_cast<int64_t>(f.weights.size());
  SINGA_CHECK(
      f.targets.size() == f.weights.size(), ShapeError,
      where << ": leaf_targetids has " << f.targets.size() << " entries, leaf_weights " << leaves);
  int64_t top = -1;
  for (int64_t t : f.targets) {
    SINGA_CHECK(t >= 0, ShapeError, where << ": leaf_targetids has a negative target " << t);
    top = std::max(top, t);
  }
  f.n_targets = a.n_targets.value_or(top + 1);
  SINGA_CHECK(f.n_targets >= 0 && top < f.n_targets, ShapeError,
              where << ": leaf target " << top << " is out of range for n_targets " << f.n_targets);
  SINGA_CHECK(a.aggregate_function >= kAverage && a.aggregate_function <= kMax, ShapeError,
              where << ": aggregate_function must be 0 (AVERAGE), 1 (SUM), 2 (MIN) or 3 (MAX), "
                       "got "
                    << a.aggregate_function);
  SINGA_CHECK(a.post_transform >= kNone && a.post_transform <= kProbit, ShapeError,
              where << ": post_transform must be 0 to 4, got " << a.post_transform);

  const std::vector<int64_t> modes = a.nodes_modes->ToVector<int64_t>();
  const std::vector<double> splits = Doubles(*a.nodes_splits);
  const std::vector<double> members =
      a.membership_values ? Doubles(*a.membership_values) : std::vector<double>();
  size_t next_member = 0;
  const int64_t num_nodes = static_cast<int64_t>(n);
  auto branch = [&](size_t i, int64_t id, int64_t leaf, const char* side) {
    const int64_t limit = leaf ? leaves : num_nodes;
    SINGA_CHECK(id >= 0 && id < limit, ShapeError,
                where << ": node " << i << "'s " << side << " branch refers to "
                      << (leaf ? "leaf " : "node ") << id << ", which does not exist (there are "
                      << limit << (leaf ? " leaves)" : " nodes)"));
    return leaf ? ~id : id;
  };
  f.nodes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Node& node = f.nodes[i];
    node.mode = modes[i];
    SINGA_CHECK(node.mode >= kLeq && node.mode <= kMember, ShapeError,
                where << ": node " << i << " has mode " << node.mode << "; modes are 0 to 6");
    node.feature = a.nodes_featureids[i];
    SINGA_CHECK(node.feature >= 0, ShapeError,
                where << ": node " << i << " has a negative feature id " << node.feature);
    f.max_feature = std::max(f.max_feature, node.feature);
    node.split = splits[i];
    node.if_true = branch(i, a.nodes_truenodeids[i], a.nodes_trueleafs[i], "true");
    node.if_false = branch(i, a.nodes_falsenodeids[i], a.nodes_falseleafs[i], "false");
    node.missing_true =
        !a.nodes_missing_value_tracks_true.empty() && a.nodes_missing_value_tracks_true[i] != 0;
    if (node.mode == kMember) {
      SINGA_CHECK(next_member < members.size(), ShapeError,
                  where << ": node " << i << " tests set membership, but membership_values "
                        << "has no set left for it (one NaN-terminated set per MEMBER node)");
      for (; next_member < members.size() && !std::isnan(members[next_member]); ++next_member)
        node.members.push_back(members[next_member]);
      ++next_member;  // the NaN that ends the set
    }
  }
  for (int64_t r : a.tree_roots)
    SINGA_CHECK(
        r >= 0 && r < num_nodes, ShapeError,
        where << ": tree root " << r << " does not exist (there are " << num_nodes << " nodes)");
  f.roots = a.tree_roots;

  // A cycle would make a walk endless: colour the nodes (0 new, 1 on the
  // current path, 2 done) in a depth-first search from every root.
  std::vector<uint8_t> colour(n, 0);
  std::vector<std::pair<int64_t, int>> stack;
  for (int64_t r : f.roots) {
    if (colour[r]) continue;
    stack.push_back({r, 0});
    colour[r] = 1;
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      if (next == 2) {
        colour[id] = 2;
        stack.pop_back();
        continue;
      }
      const int64_t child = next++ == 0 ? f.nodes[id].if_true : f.nodes[id].if_false;
      if (child < 0 || colour[child] == 2) continue;
      SINGA_CHECK(colour[child] == 0, ShapeError,
                  where << ": node " << child << " is reachable from itself (node " << id
                        << " branches back to it): a tree must not have cycles");
      colour[child] = 1;
      stack.push_back({child, 0});
    }
  }
  return f;
}

bool Goes(const Node& node, double x) {
  if (std::isnan(x) && node.missing_true) return true;
  switch (node.mode) {
    case kLeq:
      return x <= node.split;
    case kLt:
      return x < node.split;
    case kGte:
      return x >= node.split;
    case kGt:
      return x > node.split;
    case kEq:
      return x == node.split;
    case kNeq:
      return x != node.split;
    default:
      return std::find(node.members.begin(), node.members.end(), x) != node.members.end();
  }
}

// The inverse of erf on (-1, 1): Newton steps from a closed-form guess.
double ErfInv(double y) {
  if (y <= -1) return -std::numeric_limits<double>::infinity();
  if (y >= 1) return std::numeric_limits<double>::infinity();
  const double a = 0.147, l = std::log(1 - y * y), b = 2 / (std::numbers::pi * a) + l / 2;
  double x = std::copysign(std::sqrt(std::sqrt(b * b - l / a) - b), y);
  for (int i = 0; i < 3; ++i)
    x -= (std::erf(x) - y) / (2 / std::sqrt(std::numbers::pi) * std::exp(-x * x));
  return x;
}

void Transform(std::vector<double>& row, int64_t how) {
  switch (how) {
    case kSoftmax:
    case kSoftmaxZero: {
      if (row.empty()) return;
      const double top = *std::max_element(row.begin(), row.end());
      double sum = 0;
      for (double& v : row) sum += (v = how == kSoftmaxZero && v == 0 ? 0 : std::exp(v - top));
      for (double& v : row) v = sum > 0 ? v / sum : 0;
      return;
    }
    case kLogistic:
      for (double& v : row) v = 1 / (1 + std::exp(-v));
      return;
    case kProbit:
      for (double& v : row) v = std::numbers::sqrt2 * ErfInv(2 * v - 1);
      return;
    default:
      return;
  }
}

SpecList Infer(const InferCtx& c, const TreeEnsembleAttrs& a) {
  const Forest f = Build(a, c.where());
  const Shape& x = c.shape(0);
  SINGA_CHECK(x.size() == 2, ShapeError,
              c.where() << ": X must be [N, F], got " << c.inputs_string());
  SINGA_CHECK(f.max_feature < x[1], ShapeError,
              c.where() << ": a node tests feature " << f.max_feature << " but X has " << x[1]
                        << " features (" << c.inputs_string() << ")");
  return {{c.dtype(0), {x[0], f.n_targets}}};
}

template <class T>
void Predict(const Forest& f, const TreeEnsembleAttrs& a, const Tensor& x_in, const Tensor& y) {
  const Tensor x = x_in.Contiguous();
  const int64_t rows = x.shape()[0], features = x.shape()[1], k = f.n_targets;
  const T* in = x.data<T>();
  T* out = y.data<T>();
  std::vector<double> acc(k);
  std::vector<char> hit(k);
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = in + r * features;
    std::fill(acc.begin(), acc.end(), 0.0);
    std::fill(hit.begin(), hit.end(), 0);
    for (int64_t id : f.roots) {
      while (id >= 0) {
        const Node& node = f.nodes[id];
        id = Goes(node, static_cast<double>(row[node.feature])) ? node.if_true : node.if_false;
      }
      const int64_t leaf = ~id, t = f.targets[leaf];
      const double w = f.weights[leaf];
      if (a.aggregate_function == kMin)
        acc[t] = hit[t] ? std::min(acc[t], w) : w;
      else if (a.aggregate_function == kMax)
        acc[t] = hit[t] ? std::max(acc[t], w) : w;
      else
        acc[t] += w;
      hit[t] = 1;
    }
    if (a.aggregate_function == kAverage && !f.roots.empty())
      for (double& v : acc) v /= static_cast<double>(f.roots.size());
    Transform(acc, a.post_transform);
    for (int64_t t = 0; t < k; ++t) out[r * k + t] = static_cast<T>(acc[t]);
  }
}

void Forward(KernelCtx& k, const TreeEnsembleAttrs& a) {
  const Forest f = Build(a, "TreeEnsemble");
  VisitFloat(
      k.input(0).dtype(), [&]<class T>(Tag<T>) { Predict<T>(f, a, k.input(0), k.output(0)); },
      "TreeEnsemble");
}

}  // namespace

SINGA_REGISTER_OP(TreeEnsemble, TreeEnsembleAttrs)
    .domain("ai.onnx.ml")
    .since_opset(5)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("aggregate_function", &TreeEnsembleAttrs::aggregate_function)
    .attr("leaf_targetids", &TreeEnsembleAttrs::leaf_targetids, true)
    .attr("leaf_weights", &TreeEnsembleAttrs::leaf_weights, true)
    .attr("membership_values", &TreeEnsembleAttrs::membership_values)
    .attr("n_targets", &TreeEnsembleAttrs::n_targets)
    .attr("nodes_falseleafs", &TreeEnsembleAttrs::nodes_falseleafs, true)
    .attr("nodes_falsenodeids", &TreeEnsembleAttrs::nodes_falsenodeids, true)
    .attr("nodes_featureids", &TreeEnsembleAttrs::nodes_featureids, true)
    .attr("nodes_hitrates", &TreeEnsembleAttrs::nodes_hitrates)
    .attr("nodes_missing_value_tracks_true", &TreeEnsembleAttrs::nodes_missing_value_tracks_true)
    .attr("nodes_modes", &TreeEnsembleAttrs::nodes_modes, true)
    .attr("nodes_splits", &TreeEnsembleAttrs::nodes_splits, true)
    .attr("nodes_trueleafs", &TreeEnsembleAttrs::nodes_trueleafs, true)
    .attr("nodes_truenodeids", &TreeEnsembleAttrs::nodes_truenodeids, true)
    .attr("post_transform", &TreeEnsembleAttrs::post_transform)
    .attr("tree_roots", &TreeEnsembleAttrs::tree_roots, true)
    .dtypes({DType::kFloat32, DType::kFloat64, DType::kFloat16}, {0})
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
