#include <unordered_map>

#include "singa/autograd/autograd.h"

namespace singa::autograd {

namespace {

Tensor Accumulate(const Tensor& sum, const Tensor& g) {
  if (!sum.defined()) return g;
  return Call1("Add", {sum, g});
}

void CheckGrad(const Node& node, int i, const Tensor& g) {
  const Tensor& x = node.inputs[i];
  SINGA_CHECK(g.shape() == x.shape() && g.dtype() == x.dtype(), Error,
              node.op->name << " backward: gradient of input " << i << " is " << g.ToString()
                            << " but the input is " << x.ToString());
}

}  // namespace

void Backward(const Tensor& y, const Tensor& dy, const GradCallback& on_grad) {
  SINGA_CHECK(y.defined(), Error, "backward: the result tensor is undefined");
  SINGA_CHECK(!dy.defined() || dy.shape() == y.shape(), ShapeError,
              "backward: dy " << dy.ToString() << " does not match y " << y.ToString());
  NoGradGuard no_grad;
  Tensor seed = dy.defined() ? dy : Tensor::Ones(y.shape(), y.dtype(), y.device());
  // A result no gradient flows to (recorded only for export) counts as a leaf.
  if (!y.creator() || !y.requires_grad()) {
    if (y.stores_grad()) on_grad(y, seed);
    return;
  }

  // Count, for every node, how many gradient contributions it waits for, and
  // for every parameter how many nodes consume it.
  std::unordered_map<Node*, int> pending;
  std::unordered_map<const void*, int> leaf_uses;
  std::vector<Node*> stack = {y.creator().get()};
  pending[y.creator().get()] = 0;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Tensor& x : n->inputs) {
      if (!x.defined() || !x.requires_grad()) continue;
      if (Node* c = x.creator().get()) {
        auto [it, inserted] = pending.try_emplace(c, 0);
        it->second++;
        if (inserted) stack.push_back(c);
      } else if (x.stores_grad()) {
        leaf_uses[x.id()]++;
      }
    }
  }

  // A dependency order (each node before the nodes that made its inputs),
  // then, walking it backwards, which inputs lead to a parameter: only
  // those get gradients (the data input of a first layer does not).
  std::vector<Node*> order;
  {
    std::unordered_map<Node*, int> left = pending;
    std::vector<Node*> ready = {y.creator().get()};
    while (!ready.empty()) {
      Node* n = ready.back();
      ready.pop_back();
      order.push_back(n);
      for (const Tensor& x : n->inputs)
        if (x.defined() && x.requires_grad())
          if (Node* c = x.creator().get(); c && --left[c] == 0) ready.push_back(c);
    }
  }
  std::unordered_map<Node*, bool> useful;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* n = *it;
    n->needs_grad.assign(n->num_inputs, false);
    bool any = false;
    for (int i = 0; i < n->num_inputs; ++i) {
      const Tensor& x = n->inputs[i];
      if (!x.defined() || !x.requires_grad()) continue;
      Node* c = x.creator().get();
      const bool need = c ? useful[c] : x.stores_grad();
      n->needs_grad[i] = need;
      any |= need;
    }
    useful[n] = any;
  }

  std::unordered_map<Node*, TensorList> grads;
  std::unordered_map<const void*, Tensor> leaf_grads;
  grads[y.creator().get()].resize(y.creator()->num_outputs);
  grads[y.creator().get()][y.output_index()] = seed;
  std::vector<Node*> ready = {y.creator().get()};
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    TensorList outs = std::move(grads[n]);
    grads.erase(n);
    bool any = false;
    for (const Tensor& g : outs) any |= g.defined();
    SINGA_CHECK(!n->released, Error,
                "backward: " << n->op->name
                             << " was already differentiated and its saved tensors freed; "
                                "run the forward again to differentiate again");
    TensorList gin;  // no gradient reached this node: none leaves it either
    if (any && useful[n]) gin = n->op->backward(GradCtx(*n, outs), n->attrs.get());
    // NOTE: as in torch, a node's saved tensors are freed once its backward
    // ran, so activations do not outlive the step that needs them.
    n->saved.clear();
    n->saved.shrink_to_fit();
    n->released = true;
    for (int i = 0; i < n->num_inputs; ++i) {
      const Tensor& x = n->inputs[i];
      if (!x.defined() || !x.requires_grad()) continue;
      const Tensor g = i < static_cast<int>(gin.size()) && n->needs_grad[i] ? gin[i] : Tensor();
      if (g.defined()) CheckGrad(*n, i, g);
      if (Node* c = x.creator().get()) {
        TensorList& slot = grads[c];
        slot.resize(c->num_outputs);
        if (g.defined()) slot[x.output_index()] = Accumulate(slot[x.output_index()], g);
        if (--pending[c] == 0) ready.push_back(c);
      } else if (x.stores_grad()) {
        Tensor& acc = leaf_grads[x.id()];
        if (g.defined()) acc = Accumulate(acc, g);
        if (--leaf_uses[x.id()] == 0) {
          on_grad(x, acc.defined() ? acc : Tensor::Zeros(x.shape(), x.dtype(), x.device()));
          leaf_grads.erase(x.id());
        }
      }
    }
  }
}

namespace {
struct FunctionAttrs {
  std::string name;
  CustomBackward backward;
};

TensorList FunctionBackward(const GradCtx& g, const FunctionAttrs& a) {
  TensorList dy(g.num_outputs());
  for (int i = 0; i < g.num_outputs(); ++i) dy[i] = g.grad_output(i);
  TensorList dx = a.backward(dy);
  SINGA_CHECK(static_cast<int>(dx.size()) <= g.num_inputs(), Error,
              "function '" << a.name << "': backward returned " << dx.size() << " gradients for "
                           << g.num_inputs() << " inputs");
  return dx;
}

// Recorded functions share one schema; their backward travels in the attributes.
const OpSchema& FunctionSchema() {
  static const OpSchema* schema = [] {
    OpBuilder<FunctionAttrs>("Function")
        .domain("ai.singa")
        .inputs({"inputs..."})
        .outputs({"outputs..."})
        .backward(FunctionBackward);
    return OpRegistry::Find("Function", kLatestOpset, "ai.singa");
  }();
  return *schema;
}
// Registered with the other ops, so the registry (and docs/ops.md) lists it.
[[maybe_unused]] const bool kFunctionRegistered = (FunctionSchema(), true);
}  // namespace

void RecordFunction(std::string name, std::span<const Tensor> inputs, TensorList& outputs,
                    CustomBackward backward) {
  auto attrs =
      std::make_shared<const FunctionAttrs>(FunctionAttrs{std::move(name), std::move(backward)});
  internal::MaybeRecord(FunctionSchema(), attrs, inputs, outputs);
}

std::vector<std::pair<Tensor, Tensor>> Gradients(const Tensor& y, const Tensor& dy) {
  std::vector<std::pair<Tensor, Tensor>> out;
  Backward(y, dy, [&](const Tensor& p, const Tensor& g) { out.emplace_back(p, g); });
  return out;
}

}  // namespace singa::autograd
