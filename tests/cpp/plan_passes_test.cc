// The plan's passes (src/onnx/passes), each run on its own over a small
// graph built here: what it rewrote and what it left alone.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>

#include "onnx/passes/pass.h"
#include "singa/ops/fused_conv.h"

namespace singa::sonnx {
namespace {

using Ints = std::vector<int64_t>;

// A graph built value by value, with each value's spec inferred as the
// plan's build run would have it.
class TestGraph {
 public:
  TestGraph() { g_.device = Device::Cpu(); }

  int Input(const std::string& name, Shape shape, DType dtype = DType::kFloat32) {
    const int s = NewSlot(name, {dtype, std::move(shape)});
    g_.input_slots.push_back(s);
    return s;
  }
  int Param(const std::string& name, Tensor t) {
    const int s = NewSlot(name, {t.dtype(), t.shape()});
    g_.constants[s] = t.set_stores_grad(true);
    return s;
  }
  // Appends a node reading `inputs` ("" for an absent one); returns its
  // first output's slot.
  int Op(const std::string& op, const std::vector<std::string>& inputs, const std::string& output,
         const AttrMap& attrs = {}, const std::string& domain = "") {
    return OpN(op, inputs, {output}, attrs, domain);
  }
  // The same with several outputs.
  int OpN(const std::string& op, const std::vector<std::string>& inputs,
          const std::vector<std::string>& outputs, const AttrMap& attrs = {},
          const std::string& domain = "") {
    Node n;
    n.name = outputs[0];
    n.op_type = op;
    n.domain = domain;
    n.schema = &OpRegistry::Get(op, kLatestOpset, domain);
    n.attrs = n.schema->ParseAttrs(attrs, {}, n.name);
    TensorList in;
    for (const std::string& name : inputs) {
      const int s = name.empty() ? -1 : g_.slot_of.at(name);
      n.inputs.push_back(s);
      if (s < 0)
        in.emplace_back();
      else if (g_.constants[s].defined())
        in.push_back(g_.constants[s]);
      else
        in.emplace_back(specs_[s].shape, specs_[s].dtype);
    }
    const auto specs = n.schema->Infer(in, n.attrs.get(), static_cast<int>(outputs.size()), n.name);
    for (size_t k = 0; k < outputs.size(); ++k) {
      const int s = NewSlot(outputs[k], {specs[k].dtype, specs[k].shape});
      g_.producer[s] = static_cast<int>(g_.nodes.size());
      n.outputs.push_back(s);
    }
    g_.nodes.push_back(std::move(n));
    return g_.nodes.back().outputs[0];
  }
  void Output(const std::string& name) { results_.push_back(g_.slot_of.at(name)); }
  int slot(const std::string& name) const { return g_.slot_of.at(name); }
  const Tensor& constant(const std::string& name) const { return g_.constants[slot(name)]; }

  // A PassCtx over the graph: nothing folded unless `folded` names it.
  PassCtx Ctx(const std::vector<std::string>& folded_names = {}) {
    g_.output_slots = results_;
    rewritten_ = std::make_unique<Graph>(g_);
    rewritten_->nodes.clear();
    values_ = ConstantValues(g_);
    folded_.assign(g_.slot_names.size(), 0);
    for (const std::string& name : folded_names) folded_[slot(name)] = 1;
    PassCtx ctx{g_, *rewritten_, {}, values_, specs_, folded_, results_, deps_};
    ctx.nodes.assign(g_.nodes.begin(), g_.nodes.end());
    return ctx;
  }
  ValueList& values() { return values_; }
  const Spec& spec(const std::string& name) const { return specs_[slot(name)]; }

 private:
  int NewSlot(const std::string& name, Spec spec) {
    const int s = static_cast<int>(g_.slot_names.size());
    g_.slot_names.push_back(name);
    g_.slot_of[name] = s;
    g_.constants.emplace_back();
    g_.producer.push_back(-1);
    specs_.push_back(std::move(spec));
    return s;
  }

  Graph g_;
  std::unique_ptr<Graph> rewritten_;
  std::vector<Spec> specs_;
  std::vector<int> results_;
  ValueList values_;
  std::vector<char> folded_;
  std::vector<std::pair<std::weak_ptr<Block>, uint64_t>> deps_;
};

Tensor Range(Shape shape, float scale, float offset) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>((i * 7) % 13);
  return Tensor::FromVector<float>(shape, v);
}

// The op types of the nodes left, in their run order.
std::vector<std::string> OpTypes(const PassCtx& ctx) {
  std::vector<std::string> v;
  for (const auto& n : ctx.nodes)
    if (n) v.push_back(n->op_type);
  return v;
}

const Node& Only(const PassCtx& ctx, const std::string& op_type) {
  const Node* found = nullptr;
  for (const auto& n : ctx.nodes)
    if (n && n->op_type == op_type) {
      EXPECT_EQ(found, nullptr) << "more than one " << op_type;
      found = &*n;
    }
  EXPECT_NE(found, nullptr) << "no " << op_type;
  return *found;
}

// x[1,4,5,5] -> Conv(W[4,4,3,3], pads 1) -> c.
void AddConv(TestGraph& t, const std::string& x, const std::string& out, int64_t channels = 4) {
  t.Param(out + "_W", Range({channels, channels, 3, 3}, 0.05f, -0.3f));
  t.Op("Conv", {x, out + "_W"}, out, {{"pads", Ints{1, 1, 1, 1}}});
}

// Conv c -> BatchNormalization -> out, the BatchNormalization's inputs
// parameters unless `scale_input` names another value for its scale.
void AddBatchNorm(TestGraph& t, const std::string& c, const std::string& out,
                  const AttrMap& attrs = {}, const std::string& scale_input = "") {
  t.Param(out + "_scale", Range({4}, 0.1f, 0.5f));
  t.Param(out + "_bias", Range({4}, 0.05f, -0.2f));
  t.Param(out + "_mean", Range({4}, 0.03f, -0.1f));
  t.Param(out + "_var", Range({4}, 0.1f, 0.5f));
  t.Op("BatchNormalization",
       {c, scale_input.empty() ? out + "_scale" : scale_input, out + "_bias", out + "_mean",
        out + "_var"},
       out, attrs);
}

// The scale, bias, mean and var of AddBatchNorm's node `out`.
std::array<std::vector<float>, 4> BatchNormParams(const TestGraph& t, const std::string& out) {
  std::array<std::vector<float>, 4> v;
  const char* names[] = {"_scale", "_bias", "_mean", "_var"};
  for (int i = 0; i < 4; ++i) v[i] = t.constant(out + names[i]).ToVector<float>();
  return v;
}

TEST(PlanPasses, RunInOrderByName) {
  std::vector<std::string_view> names;
  for (const Pass& p : PlanPasses()) names.push_back(p.name);
  EXPECT_EQ(names,
            (std::vector<std::string_view>{"fold_constants", "fold_batch_norm",
                                           "fuse_conv_epilogue", "fuse_gemm_activation",
                                           "choose_layouts", "fuse_elementwise", "plan_releases"}));
}

TEST(FoldConstants, FoldedValuesBecomeConstantsAndTheirNodesGo) {
  TestGraph t;
  t.Input("x", {2, 3});
  t.Param("p", Range({3}, 1, 0));
  t.Op("Neg", {"p"}, "np");       // folded
  t.Op("Mul", {"x", "np"}, "y");  // reads the folded value
  t.Op("Sqrt", {"p"}, "sp");      // not folded (the build run said so)
  t.Op("Add", {"y", "sp"}, "z");
  t.Output("z");
  PassCtx ctx = t.Ctx({"np"});
  const Tensor folded = Call1("Neg", {ctx.source.constants[t.slot("p")]});
  t.values()[t.slot("np")] = folded;
  FoldConstants(ctx);
  EXPECT_EQ(OpTypes(ctx), (std::vector<std::string>{"Mul", "Sqrt", "Add"}));
  EXPECT_EQ(internal::BlockOf(ctx.graph.constants[t.slot("np")]), internal::BlockOf(folded));
  EXPECT_FALSE(ctx.graph.constants[t.slot("sp")].defined());
}

TEST(FoldBatchNorm, FoldsIntoTheConvsWeightsAndBias) {
  TestGraph t;
  t.Input("x", {1, 4, 5, 5});
  AddConv(t, "x", "c");
  AddBatchNorm(t, "c", "n", {{"epsilon", 1e-3f}});
  t.Output("n");
  PassCtx ctx = t.Ctx();
  FoldBatchNorm(ctx);
  ASSERT_EQ(OpTypes(ctx), (std::vector<std::string>{"Conv"}));
  const Node& conv = *ctx.nodes[0];
  EXPECT_EQ(conv.outputs, (std::vector<int>{t.slot("n")}));
  ASSERT_EQ(conv.inputs.size(), 3u);
  EXPECT_EQ(ctx.graph.slot_names[conv.inputs[1]], "n:folded_W");
  EXPECT_EQ(ctx.graph.slot_names[conv.inputs[2]], "n:folded_B");
  // The folded weights and bias, channel by channel.
  const auto& k = ctx.source.constants;
  const std::vector<float> w = k[t.slot("c_W")].ToVector<float>(),
                           w2 = ctx.graph.constants[conv.inputs[1]].ToVector<float>(),
                           b2 = ctx.graph.constants[conv.inputs[2]].ToVector<float>();
  const auto [scale, bias, mean, var] = BatchNormParams(t, "n");
  for (int m = 0; m < 4; ++m) {
    const float s = scale[m] / std::sqrt(var[m] + 1e-3f);
    EXPECT_FLOAT_EQ(b2[m], bias[m] - mean[m] * s);
    for (int j = 0; j < 36; ++j) EXPECT_FLOAT_EQ(w2[m * 36 + j], w[m * 36 + j] * s);
  }
  // The plan is rebuilt when one of the six parameters changes.
  EXPECT_EQ(ctx.deps.size(), 5u);  // W, scale, bias, mean, var (no conv bias)
}

TEST(FoldBatchNorm, FoldsIntoAConvTransposePerOutputChannelOfEachGroup) {
  // W [C_in 4, C_out/group 2, 3, 3] in 2 groups: output channel g * 2 + j
  // is W[g * 2 + i, j] for i in 0..1.
  TestGraph t;
  t.Input("x", {1, 4, 5, 5});
  t.Param("c_W", Range({4, 2, 3, 3}, 0.05f, -0.3f));
  t.Param("c_B", Range({4}, 0.2f, -0.1f));
  t.Op("ConvTranspose", {"x", "c_W", "c_B"}, "c", {{"group", int64_t{2}}});
  AddBatchNorm(t, "c", "n");
  t.Output("n");
  PassCtx ctx = t.Ctx();
  FoldBatchNorm(ctx);
  ASSERT_EQ(OpTypes(ctx), (std::vector<std::string>{"ConvTranspose"}));
  const Node& conv = *ctx.nodes[0];
  const auto& k = ctx.source.constants;
  const std::vector<float> w = k[t.slot("c_W")].ToVector<float>(),
                           b = k[t.slot("c_B")].ToVector<float>(),
                           w2 = ctx.graph.constants[conv.inputs[1]].ToVector<float>(),
                           b2 = ctx.graph.constants[conv.inputs[2]].ToVector<float>();
  const auto [scale, bias, mean, var] = BatchNormParams(t, "n");
  for (int m = 0; m < 4; ++m) {
    const float s = scale[m] / std::sqrt(var[m] + 1e-5f);
    EXPECT_FLOAT_EQ(b2[m], (b[m] - mean[m]) * s + bias[m]);
    const int g = m / 2, j = m % 2;
    for (int i = 0; i < 2; ++i)
      for (int p = 0; p < 9; ++p) {
        const int at = ((g * 2 + i) * 2 + j) * 9 + p;
        EXPECT_FLOAT_EQ(w2[at], w[at] * s) << "channel " << m;
      }
  }
}

TEST(FoldBatchNorm, LeavesABatchNormThatCannotFold) {
  // The Conv's result read by another node too.
  {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    AddConv(t, "x", "c");
    AddBatchNorm(t, "c", "n");
    t.Op("Add", {"n", "c"}, "y");
    t.Output("y");
    PassCtx ctx = t.Ctx();
    FoldBatchNorm(ctx);
    EXPECT_EQ(OpTypes(ctx), (std::vector<std::string>{"Conv", "BatchNormalization", "Add"}));
  }
  // A scale computed in the graph, not a parameter.
  {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    t.Input("s", {4});
    AddConv(t, "x", "c");
    AddBatchNorm(t, "c", "n", {}, "s");
    t.Output("n");
    PassCtx ctx = t.Ctx();
    FoldBatchNorm(ctx);
    EXPECT_EQ(OpTypes(ctx), (std::vector<std::string>{"Conv", "BatchNormalization"}));
  }
  // Training mode.
  {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    AddConv(t, "x", "c");
    AddBatchNorm(t, "c", "n", {{"training_mode", int64_t{1}}});
    t.Output("n");
    PassCtx ctx = t.Ctx();
    FoldBatchNorm(ctx);
    EXPECT_EQ(OpTypes(ctx), (std::vector<std::string>{"Conv", "BatchNormalization"}));
    EXPECT_TRUE(ctx.deps.empty());
  }
}

TEST(FuseElementwise, AGroupWhoseValueTwoOfItsNodesReadBecomesOneNodeWhereItsLastRan) {
  TestGraph t;
  t.Input("x", {2, 3});
  t.Param("b", Range({3}, 1, 0));
  t.Op("Add", {"x", "b"}, "a");
  t.Op("Sigmoid", {"a"}, "s");
  t.Op("Exp", {"x"}, "e");  // a graph output: read outside the group too
  t.Op("Mul", {"s", "a"}, "m");
  t.Op("Sub", {"m", "e"}, "y");
  t.Output("y");
  t.Output("e");
  PassCtx ctx = t.Ctx();
  FuseElementwise(ctx);
  ASSERT_EQ(OpTypes(ctx), (std::vector<std::string>{"Exp", "FusedElementwise"}));
  ASSERT_TRUE(ctx.nodes[4]);
  const Node& f = *ctx.nodes[4];
  EXPECT_EQ(f.domain, "ai.singa");
  EXPECT_EQ(f.inputs, (std::vector<int>{t.slot("x"), t.slot("b"), t.slot("e")}));
  EXPECT_EQ(f.outputs, (std::vector<int>{t.slot("y")}));
  EXPECT_EQ(AttrOf<std::vector<std::string>>(f, "ops"),
            (std::vector<std::string>{"Add", "Sigmoid", "Mul", "Sub"}));
  // Operands: inputs 0-2, then the steps' results 3-6.
  EXPECT_EQ(AttrOf<Ints>(f, "args"), (Ints{0, 1, 3, -1, 4, 3, 5, 2}));
}

TEST(FuseElementwise, AValueTwoGroupsReadIsMadeByNeither) {
  TestGraph t;
  t.Input("x", {2, 3});
  t.Op("Relu", {"x"}, "s");  // read by both groups
  t.Op("Neg", {"s"}, "u");
  t.Op("Abs", {"u"}, "v");
  t.Op("Exp", {"s"}, "w");
  t.Op("Sigmoid", {"w"}, "y");
  t.Output("v");
  t.Output("y");
  PassCtx ctx = t.Ctx();
  FuseElementwise(ctx);
  ASSERT_EQ(OpTypes(ctx),
            (std::vector<std::string>{"Relu", "FusedElementwise", "FusedElementwise"}));
  EXPECT_EQ(ctx.nodes[2]->inputs, (std::vector<int>{t.slot("s")}));
  EXPECT_EQ(ctx.nodes[4]->inputs, (std::vector<int>{t.slot("s")}));
}

TEST(FuseElementwise, ALoneOpAndOtherDtypesStay) {
  TestGraph t;
  t.Input("x", {2, 3});
  t.Input("i", {2, 3}, DType::kInt64);
  t.Op("Relu", {"x"}, "r");
  t.Op("Add", {"i", "i"}, "j");
  t.Op("Neg", {"j"}, "k");
  t.Output("r");
  t.Output("k");
  PassCtx ctx = t.Ctx();
  FuseElementwise(ctx);
  EXPECT_EQ(OpTypes(ctx), (std::vector<std::string>{"Relu", "Add", "Neg"}));
}

TEST(FuseConvEpilogue, ConvAddReluBecomesOneFusedConvWhereTheReluWas) {
  TestGraph t;
  t.Input("x", {1, 4, 5, 5});
  t.Input("z", {1, 4, 5, 5});
  AddConv(t, "x", "c");
  t.Op("Sigmoid", {"z"}, "sz");  // between the Conv and the Add
  t.Op("Add", {"sz", "c"}, "s");
  t.Op("Relu", {"s"}, "y");
  t.Output("y");
  PassCtx ctx = t.Ctx();
  FuseConvEpilogue(ctx);
  ASSERT_EQ(OpTypes(ctx), (std::vector<std::string>{"Sigmoid", "FusedConv"}));
  EXPECT_FALSE(ctx.nodes[0]);
  ASSERT_TRUE(ctx.nodes[3]);
  const Node& f = *ctx.nodes[3];
  EXPECT_EQ(f.domain, "ai.singa");
  EXPECT_EQ(f.inputs, (std::vector<int>{t.slot("x"), t.slot("c_W"), -1, t.slot("sz")}));
  EXPECT_EQ(f.outputs, (std::vector<int>{t.slot("y")}));
  EXPECT_EQ(AttrOf<std::string>(f, "activation"), "Relu");
  EXPECT_EQ(AttrOf<Ints>(f, "pads"), (Ints{1, 1, 1, 1}));
}

TEST(FuseConvEpilogue, ClipTakesItsConstantBounds) {
  TestGraph t;
  t.Input("x", {1, 4, 5, 5});
  AddConv(t, "x", "c");
  t.Param("lo", Tensor::Scalar(-0.5f));
  t.Param("hi", Tensor::Scalar(2.0f));
  t.Op("Clip", {"c", "lo", "hi"}, "y");
  t.Output("y");
  PassCtx ctx = t.Ctx();
  FuseConvEpilogue(ctx);
  const Node& f = Only(ctx, "FusedConv");
  EXPECT_EQ(AttrOf<std::string>(f, "activation"), "Clip");
  EXPECT_EQ(AttrOf<float>(f, "alpha"), -0.5f);
  EXPECT_EQ(AttrOf<float>(f, "beta"), 2.0f);
  EXPECT_EQ(OpTypes(ctx), (std::vector<std::string>{"FusedConv"}));
}

// c -> Add(c, plus) -> Clip(zero, six) -> Mul(c, .) -> `last` (Div or Mul)
// by `by` -> y, Paddle's HardSwish with these constants (Add's operands
// swapped with `plus_first`).
void AddHardSwishChain(TestGraph& t, const std::string& plus, const std::string& last,
                       const std::string& by, bool plus_first = false) {
  t.Op("Add",
       plus_first ? std::vector<std::string>{plus, "c"} : std::vector<std::string>{"c", plus}, "a");
  t.Op("Clip", {"a", "zero", "six"}, "g");
  t.Op("Mul", {"c", "g"}, "m");
  t.Op(last, {"m", by}, "y");
  t.Output("y");
}

TEST(FuseConvEpilogue, SpelledOutSiluAndHardSwishBecomeTheirActivations) {
  // SiLU: Mul(c, Sigmoid(c)), either order.
  for (bool swap : {false, true}) {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    AddConv(t, "x", "c");
    t.Op("Sigmoid", {"c"}, "s");
    t.Op("Mul", swap ? std::vector<std::string>{"s", "c"} : std::vector<std::string>{"c", "s"},
         "y");
    t.Output("y");
    PassCtx ctx = t.Ctx();
    FuseConvEpilogue(ctx);
    ASSERT_EQ(OpTypes(ctx), (std::vector<std::string>{"FusedConv"}));
    EXPECT_TRUE(ctx.nodes[2]);  // where the Mul ran
    EXPECT_EQ(AttrOf<std::string>(*ctx.nodes[2], "activation"), "Swish");
    EXPECT_EQ(ctx.nodes[2]->outputs, (std::vector<int>{t.slot("y")}));
  }
  // Paddle's HardSwish: Div(Mul(c, Clip(Add(c, 3), 0, 6)), 6), or a Mul by 1/6 last.
  for (bool div : {true, false}) {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    AddConv(t, "x", "c");
    t.Param("three", Tensor::Scalar(3.f));
    t.Param("zero", Tensor::Scalar(0.f));
    t.Param("six", Tensor::Scalar(6.f));
    t.Param("sixth", Tensor::Scalar(1.f / 6));
    AddHardSwishChain(t, "three", div ? "Div" : "Mul", div ? "six" : "sixth", true);
    PassCtx ctx = t.Ctx();
    FuseConvEpilogue(ctx);
    ASSERT_EQ(OpTypes(ctx), (std::vector<std::string>{"FusedConv"}));
    EXPECT_EQ(AttrOf<std::string>(Only(ctx, "FusedConv"), "activation"), "HardSwish");
    EXPECT_EQ(Only(ctx, "FusedConv").outputs, (std::vector<int>{t.slot("y")}));
  }
  // HardSigmoid(alpha 1/6, beta 0.5) times the value, and the HardSwish op.
  for (bool op : {false, true}) {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    AddConv(t, "x", "c");
    if (op) {
      t.Op("HardSwish", {"c"}, "y");
    } else {
      t.Op("HardSigmoid", {"c"}, "g", {{"alpha", 1.f / 6}, {"beta", 0.5f}});
      t.Op("Mul", {"g", "c"}, "y");
    }
    t.Output("y");
    PassCtx ctx = t.Ctx();
    FuseConvEpilogue(ctx);
    ASSERT_EQ(OpTypes(ctx), (std::vector<std::string>{"FusedConv"}));
    EXPECT_EQ(AttrOf<std::string>(Only(ctx, "FusedConv"), "activation"), "HardSwish");
  }
}

TEST(FuseConvEpilogue, GatedFormsThatAreNotTheActivationStay) {
  const auto types_after = [](const std::function<void(TestGraph&)>& build) {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    AddConv(t, "x", "c");
    t.Param("three", Tensor::Scalar(3.f));
    t.Param("two", Tensor::Scalar(2.f));
    t.Param("zero", Tensor::Scalar(0.f));
    t.Param("six", Tensor::Scalar(6.f));
    build(t);
    PassCtx ctx = t.Ctx();
    FuseConvEpilogue(ctx);
    return OpTypes(ctx);
  };
  using V = std::vector<std::string>;
  // The sigmoid is a result too.
  EXPECT_EQ(types_after([](TestGraph& t) {
              t.Op("Sigmoid", {"c"}, "s");
              t.Op("Mul", {"c", "s"}, "y");
              t.Output("y");
              t.Output("s");
            }),
            (V{"Conv", "Sigmoid", "Mul"}));
  // A constant of higher rank broadcasts the result into another shape.
  EXPECT_EQ(types_after([](TestGraph& t) {
              t.Param("three5", Tensor::Full({1, 1, 1, 1, 1}, 3.0, DType::kFloat32));
              AddHardSwishChain(t, "three5", "Div", "six");
            }),
            (V{"Conv", "Add", "Clip", "Mul", "Div"}));
  // A third reader of the Conv's result.
  EXPECT_EQ(types_after([](TestGraph& t) {
              t.Op("Sigmoid", {"c"}, "s");
              t.Op("Mul", {"c", "s"}, "y");
              t.Op("Relu", {"c"}, "r");
              t.Output("y");
              t.Output("r");
            }),
            (V{"Conv", "Sigmoid", "Mul", "Relu"}));
  // Another gate: Tanh.
  EXPECT_EQ(types_after([](TestGraph& t) {
              t.Op("Tanh", {"c"}, "s");
              t.Op("Mul", {"c", "s"}, "y");
              t.Output("y");
            }),
            (V{"Conv", "Tanh", "Mul"}));
  // x * Clip(x + 2, 0, 6) / 6 and x * Clip(x + 3, 0, 6) / 2 are not HardSwish.
  EXPECT_EQ(types_after([](TestGraph& t) { AddHardSwishChain(t, "two", "Div", "six"); }),
            (V{"Conv", "Add", "Clip", "Mul", "Div"}));
  EXPECT_EQ(types_after([](TestGraph& t) { AddHardSwishChain(t, "three", "Div", "two"); }),
            (V{"Conv", "Add", "Clip", "Mul", "Div"}));
}

TEST(FuseConvEpilogue, StopsWhereTheChainCannotFuse) {
  // An op with no post-op stays after the Conv.
  {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    AddConv(t, "x", "c");
    t.Op("Sigmoid", {"c"}, "y");
    t.Output("y");
    PassCtx ctx = t.Ctx();
    FuseConvEpilogue(ctx);
    EXPECT_EQ(OpTypes(ctx), (std::vector<std::string>{"Conv", "Sigmoid"}));
  }
  // An Add that broadcasts its other input.
  {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    t.Input("b", {1, 4, 1, 1});
    AddConv(t, "x", "c");
    t.Op("Add", {"c", "b"}, "y");
    t.Output("y");
    PassCtx ctx = t.Ctx();
    FuseConvEpilogue(ctx);
    EXPECT_EQ(OpTypes(ctx), (std::vector<std::string>{"Conv", "Add"}));
  }
  // The Conv's result is a result too.
  {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    AddConv(t, "x", "c");
    t.Op("Relu", {"c"}, "y");
    t.Output("y");
    t.Output("c");
    PassCtx ctx = t.Ctx();
    FuseConvEpilogue(ctx);
    EXPECT_EQ(OpTypes(ctx), (std::vector<std::string>{"Conv", "Relu"}));
  }
  // After an activation the chain ends: the Add stays.
  {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    t.Input("z", {1, 4, 5, 5});
    AddConv(t, "x", "c");
    t.Op("Relu", {"c"}, "r");
    t.Op("Add", {"r", "z"}, "y");
    t.Output("y");
    PassCtx ctx = t.Ctx();
    FuseConvEpilogue(ctx);
    EXPECT_EQ(OpTypes(ctx), (std::vector<std::string>{"FusedConv", "Add"}));
    EXPECT_EQ(Only(ctx, "FusedConv").inputs.size(), 2u);
  }
  // Clip bounds computed from data.
  {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    t.Input("hi", {});
    AddConv(t, "x", "c");
    t.Op("Clip", {"c", "", "hi"}, "y");
    t.Output("y");
    PassCtx ctx = t.Ctx();
    FuseConvEpilogue(ctx);
    EXPECT_EQ(OpTypes(ctx), (std::vector<std::string>{"Conv", "Clip"}));
  }
}

TEST(FuseGemmActivation, GemmReluBecomesOneFusedGemmWhereTheReluWas) {
  TestGraph t;
  t.Input("x", {2, 8});
  t.Param("w", Range({4, 8}, 0.05f, -0.3f));
  t.Param("b", Range({4}, 0.1f, -0.2f));
  t.Param("lo", Tensor::Scalar(-0.5f));
  t.Op("Gemm", {"x", "w", "b"}, "g", {{"transB", int64_t{1}}});
  t.Op("Relu", {"g"}, "r");
  // [2,4] x [4,8]: w read untransposed, no C.
  t.Op("Gemm", {"r", "w"}, "g2", {{"alpha", 2.f}});
  t.Op("Clip", {"g2", "lo"}, "y");
  t.Output("y");
  PassCtx ctx = t.Ctx();
  FuseGemmActivation(ctx);
  ASSERT_EQ(OpTypes(ctx), (std::vector<std::string>{"FusedGemm", "FusedGemm"}));
  EXPECT_FALSE(ctx.nodes[0]);
  const Node& first = *ctx.nodes[1];
  EXPECT_EQ(first.inputs, (std::vector<int>{t.slot("x"), t.slot("w"), t.slot("b")}));
  EXPECT_EQ(first.outputs, (std::vector<int>{t.slot("r")}));
  EXPECT_EQ(AttrOf<std::string>(first, "activation"), "Relu");
  EXPECT_EQ(AttrOf<int64_t>(first, "transB"), 1);
  const Node& second = *ctx.nodes[3];
  EXPECT_EQ(AttrOf<std::string>(second, "activation"), "Clip");
  EXPECT_EQ(AttrOf<float>(second, "act_alpha"), -0.5f);
  EXPECT_EQ(AttrOf<float>(second, "act_beta"), INFINITY);
  EXPECT_EQ(AttrOf<float>(second, "alpha"), 2.f);
}

TEST(FuseGemmActivation, LeavesAGemmWhoseResultOthersRead) {
  TestGraph t;
  t.Input("x", {2, 8});
  t.Param("w", Range({8, 4}, 0.05f, -0.3f));
  t.Op("Gemm", {"x", "w"}, "g");
  t.Op("Relu", {"g"}, "y");
  t.Output("y");
  t.Output("g");
  PassCtx ctx = t.Ctx();
  FuseGemmActivation(ctx);
  EXPECT_EQ(OpTypes(ctx), (std::vector<std::string>{"Gemm", "Relu"}));
}

int64_t Blocked(const Node& n) { return AttrOf<int64_t>(n, "blocked").value_or(0); }

TEST(ChooseLayouts, ValuesBetweenConvolutionsAreBlocked) {
  using namespace fused_conv;
  // c1 -> c2 (+ c1 as Z) -> c3 -> result: c1 and c2's result stay blocked.
  TestGraph t;
  t.Input("x", {1, 4, 5, 5});
  AddConv(t, "x", "c1");
  AddConv(t, "c1", "c2");
  t.Op("Add", {"c2", "c1"}, "s");
  AddConv(t, "s", "c3");
  t.Output("c3");
  PassCtx ctx = t.Ctx();
  FuseConvEpilogue(ctx);
  ChooseLayouts(ctx);
  ASSERT_EQ(OpTypes(ctx), (std::vector<std::string>{"FusedConv", "FusedConv", "FusedConv"}));
  std::vector<int64_t> bits;
  for (const auto& n : ctx.nodes)
    if (n) bits.push_back(Blocked(*n));
  EXPECT_EQ(bits, (Ints{kBlockedY, kBlockedX | kBlockedY | kBlockedZ, kBlockedX}));
}

TEST(ChooseLayouts, LeavesValuesOtherOpsReadInNchw) {
  // A Z whose reader writes NCHW (its result is the plan's) stays NCHW, and
  // so does a value another op reads.
  {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    AddConv(t, "x", "c1");
    AddConv(t, "c1", "c2");
    t.Op("Add", {"c2", "c1"}, "y");
    t.Output("y");
    PassCtx ctx = t.Ctx();
    FuseConvEpilogue(ctx);
    ChooseLayouts(ctx);
    EXPECT_EQ(OpTypes(ctx), (std::vector<std::string>{"Conv", "FusedConv"}));
    EXPECT_EQ(Blocked(Only(ctx, "FusedConv")), 0);
  }
  {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    AddConv(t, "x", "c1");
    t.Op("Softmax", {"c1"}, "a", {{"axis", int64_t{1}}});
    AddConv(t, "a", "c2");
    AddConv(t, "c2", "c3");
    t.Op("Relu", {"c2"}, "r");
    t.Output("c3");
    t.Output("r");
    PassCtx ctx = t.Ctx();
    ChooseLayouts(ctx);
    EXPECT_EQ(OpTypes(ctx), (std::vector<std::string>{"Conv", "Softmax", "Conv", "Conv", "Relu"}));
  }
}

TEST(ChooseLayouts, BlockedValuesFlowThroughPoolsElementwiseOpsConcatAndSplit) {
  using namespace fused_conv;
  // c1 -> MaxPool -> c2 -> Split(16, 16) -> a, b; a -> c3 -> Add(b) -> Concat(a) -> Sigmoid -> c4:
  // every value between c1 and c4 is blocked; 16 channels are whole blocks (B is 16 or 8).
  TestGraph t;
  t.Input("x", {1, 32, 8, 8});
  AddConv(t, "x", "c1", 32);
  t.Op("MaxPool", {"c1"}, "p", {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  AddConv(t, "p", "c2", 32);
  t.Param("sizes", Tensor::FromVector<int64_t>({2}, {16, 16}));
  t.OpN("Split", {"c2", "sizes"}, {"a", "b"}, {{"axis", int64_t{1}}});
  AddConv(t, "a", "c3", 16);
  t.Op("Add", {"c3", "b"}, "s");
  t.Op("Concat", {"s", "a"}, "j", {{"axis", int64_t{1}}});
  t.Op("Sigmoid", {"j"}, "g");
  AddConv(t, "g", "c4", 32);
  t.Output("c4");
  PassCtx ctx = t.Ctx();
  ChooseLayouts(ctx);
  EXPECT_EQ(OpTypes(ctx),
            (std::vector<std::string>{"FusedConv", "BlockedMaxPool", "FusedConv", "Split",
                                      "FusedConv", "Add", "Concat", "Sigmoid", "FusedConv"}));
  std::vector<int64_t> bits;
  for (const auto& n : ctx.nodes)
    if (n && n->op_type == "FusedConv") bits.push_back(Blocked(*n));
  EXPECT_EQ(bits, (Ints{kBlockedY, kBlockedX | kBlockedY, kBlockedX | kBlockedY, kBlockedX}));
}

TEST(ChooseLayouts, OpsThatMoveElementsKeepTheirValuesInNchw) {
  // Concat of parts that are not whole blocks (4 channels), a Mul that
  // broadcasts a per-channel scale, a MaxPool with Indices: NCHW around.
  const auto plain = [](TestGraph& t, const std::string& result) {
    t.Output(result);
    PassCtx ctx = t.Ctx();
    ChooseLayouts(ctx);
    for (const auto& n : ctx.nodes)
      if (n) EXPECT_EQ(Blocked(*n), 0) << n->name;
    for (const auto& n : ctx.nodes)
      if (n) EXPECT_FALSE(n->op_type.starts_with("Blocked")) << n->name;
  };
  {
    TestGraph t;
    t.Input("x", {1, 4, 5, 5});
    AddConv(t, "x", "c1");
    AddConv(t, "x", "c2");
    t.Op("Concat", {"c1", "c2"}, "j", {{"axis", int64_t{1}}});
    AddConv(t, "j", "c3", 8);
    plain(t, "c3");
  }
  {
    TestGraph t;
    t.Input("x", {1, 32, 5, 5});
    AddConv(t, "x", "c1", 32);
    t.Param("scale", Range({1, 32, 1, 1}, 0.1f, 0.5f));
    t.Op("Mul", {"c1", "scale"}, "m");
    AddConv(t, "m", "c2", 32);
    plain(t, "c2");
  }
  {
    TestGraph t;
    t.Input("x", {1, 32, 4, 4});
    AddConv(t, "x", "c1", 32);
    t.OpN("MaxPool", {"c1"}, {"p", "i"}, {{"kernel_shape", Ints{2, 2}}});
    AddConv(t, "p", "c2", 32);
    plain(t, "c2");
  }
}

TEST(PlanReleases, TheNodesLeftBecomeTheGraphWithReleases) {
  TestGraph t;
  t.Input("x", {2, 3});
  t.Op("Relu", {"x"}, "r");
  t.Op("Neg", {"r"}, "n");
  t.Op("Sigmoid", {"n"}, "y");
  t.Output("y");
  PassCtx ctx = t.Ctx();
  ctx.nodes[1].reset();
  ctx.nodes[2]->inputs = {t.slot("r")};
  PlanValueReleases(ctx);
  ASSERT_EQ(ctx.graph.nodes.size(), 2u);
  EXPECT_EQ(ctx.graph.nodes[0].op_type, "Relu");
  EXPECT_EQ(ctx.graph.nodes[1].op_type, "Sigmoid");
  EXPECT_EQ(ctx.graph.output_slots, (std::vector<int>{t.slot("y")}));
  ASSERT_EQ(ctx.graph.release_after.size(), 2u);
  EXPECT_EQ(ctx.graph.release_after[1], (std::vector<int>{t.slot("r")}));
}

}  // namespace
}  // namespace singa::sonnx
