// The training half of the binding: training mode, layers, functional
// losses, optimizers, graph steps and the states file. python/singa's
// autograd, layer, model and opt modules wrap these with SINGA's names.
#include "nn_bindings.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/trampoline.h>

#include "singa/autograd/autograd.h"
#include "singa/nn/functional.h"
#include "singa/nn/layers.h"
#include "singa/nn/model.h"
#include "singa/ops/tape.h"
#include "singa/opt/optimizer.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace singa {

namespace {
// A Python callable held by C++ (a recorded function's backward): the
// references are taken and dropped with the GIL, whichever thread drops them.
std::shared_ptr<nb::object> HoldPython(nb::object fn) {
  return std::shared_ptr<nb::object>(new nb::object(std::move(fn)), [](nb::object* o) {
    nb::gil_scoped_acquire gil;
    delete o;
  });
}
}  // namespace

void BindNN(nb::module_& m) {
  m.def(
      "record_function",
      [](std::string name, const TensorList& inputs, TensorList outputs, nb::object backward) {
        auto fn = HoldPython(std::move(backward));
        autograd::RecordFunction(std::move(name), inputs, outputs, [fn](const TensorList& dy) {
          nb::gil_scoped_acquire gil;
          nb::list args;
          for (const Tensor& t : dy) args.append(t.defined() ? nb::cast(t) : nb::none());
          TensorList dx;
          for (nb::handle h : (*fn)(args))
            dx.push_back(h.is_none() ? Tensor() : nb::cast<Tensor>(h));
          return dx;
        });
        return outputs;
      },
      "name"_a, "inputs"_a, "outputs"_a, "backward"_a,
      "Records a user function's outputs for autograd; returns them with their history.");
  m.def("training_mode", &TrainingMode);
  m.def("set_training_mode", &SetTrainingMode, "on"_a);
  m.def("plan_graph_memory",
        [](const Device& d, const TensorList& keep) { return d.PlanGraphMemory(keep); });

  nb::module_ nn = m.def_submodule("nn", "layers, losses and graph steps");
  // Python subclasses override forward/initialize/train_one_batch through
  // the trampolines; python/singa/layer.py and model.py add the Python call
  // protocol (any arguments, attribute registration) to these classes.
  using Pub = LayerAccess;
  nb::class_<nn::Layer, PyLayer<nn::Layer>>(nn, "Layer")
      .def(nb::init<>())
      .def(
          "_call", [](nn::Layer& l, const TensorList& x) { return l(x); }, "inputs"_a)
      .def_static(
          "_constructed", [](nb::handle self) { return nb::inst_ready(self); }, "layer"_a,
          "Whether the C++ layer exists (its __init__ ran).")
      .def("_set_initialized", [](nn::Layer& l) { Pub::SetInitialized(l); })
      .def(
          "_add_param",
          [](nn::Layer& l, const std::string& n, Tensor t) { Pub::AddParam(l, n, t); }, "name"_a,
          "tensor"_a)
      .def(
          "_add_buffer",
          [](nn::Layer& l, const std::string& n, Tensor t) { Pub::AddBuffer(l, n, t); }, "name"_a,
          "tensor"_a)
      .def(
          "_add_layer",
          [](nn::Layer& l, const std::string& n, std::shared_ptr<nn::Layer> sub) {
            Pub::AddLayer(l, n, std::move(sub));
          },
          "name"_a, "layer"_a)
      .def(
          "_remove", [](nn::Layer& l, const std::string& n) { Pub::Remove(l, n); }, "name"_a)
      .def("_params", &nn::Layer::Params)
      .def("_states", &nn::Layer::States)
      .def("_set_params", &nn::Layer::SetParams, "values"_a)
      .def("_set_states", &nn::Layer::SetStates, "values"_a)
      .def("_name_tensors", &nn::Layer::NameTensors, "prefix"_a = "")
      .def_prop_ro("initialized", &nn::Layer::initialized);

  nb::class_<nn::Linear, nn::Layer>(nn, "Linear")
      .def(nb::init<int64_t, int64_t, bool>(), "in_features"_a, "out_features"_a, "bias"_a = true);
  nn.attr("LAZY") = nn::kLazy;
  nb::class_<nn::Gemm, nn::Layer>(nn, "Gemm")
      .def(
          "__init__",
          [](nn::Gemm* self, int64_t n, float alpha, float beta, bool ta, bool tb, bool bias) {
            new (self) nn::Gemm(n, nn::Gemm::Options{alpha, beta, ta, tb, bias});
          },
          "nb_kernels"_a, "alpha"_a = 1.0f, "beta"_a = 1.0f, "transA"_a = false, "transB"_a = true,
          "bias"_a = true);
  nb::class_<nn::Embedding, nn::Layer>(nn, "Embedding")
      .def(nb::init<int64_t, int64_t>(), "input_dim"_a, "output_dim"_a);
  auto conv_options = [](std::vector<int64_t> stride, std::vector<int64_t> padding,
                         std::vector<int64_t> dilation, int64_t group, bool bias,
                         std::string pad_mode, std::string activation) {
    return nn::Conv2d::Options{
        std::move(stride),   std::move(padding),   std::move(dilation), group, bias,
        std::move(pad_mode), std::move(activation)};
  };
  nb::class_<nn::Conv2d, nn::Layer>(nn, "Conv2d")
      .def(
          "__init__",
          [conv_options](nn::Conv2d* self, int64_t n, std::vector<int64_t> kernel,
                         std::vector<int64_t> stride, std::vector<int64_t> padding,
                         std::vector<int64_t> dilation, int64_t group, bool bias,
                         std::string pad_mode, std::string activation) {
            new (self) nn::Conv2d(
                n, std::move(kernel),
                conv_options(stride, padding, dilation, group, bias, pad_mode, activation));
          },
          "nb_kernels"_a, "kernel_size"_a, "stride"_a, "padding"_a, "dilation"_a, "group"_a,
          "bias"_a, "pad_mode"_a, "activation"_a);
  nb::class_<nn::SeparableConv2d, nn::Layer>(nn, "SeparableConv2d")
      .def(
          "__init__",
          [conv_options](nn::SeparableConv2d* self, int64_t n, int64_t kernel,
                         std::vector<int64_t> stride, std::vector<int64_t> padding, bool bias) {
            new (self) nn::SeparableConv2d(
                n, kernel, conv_options(stride, padding, {1, 1}, 1, bias, "NOTSET", "NOTSET"));
          },
          "nb_kernels"_a, "kernel_size"_a, "stride"_a, "padding"_a, "bias"_a);
  nb::class_<nn::BatchNorm2d, nn::Layer>(nn, "BatchNorm2d")
      .def(nb::init<float, float>(), "momentum"_a = 0.9f, "epsilon"_a = 1e-5f);
  nb::class_<nn::Pooling, nn::Layer>(nn, "Pooling")
      .def(
          "__init__",
          [](nn::Pooling* self, std::vector<int64_t> kernel, std::vector<int64_t> stride,
             std::vector<int64_t> padding, bool is_max, std::string pad_mode) {
            new (self) nn::Pooling(std::move(kernel),
                                   nn::Pooling::Options{std::move(stride), std::move(padding),
                                                        is_max, std::move(pad_mode)});
          },
          "kernel_size"_a, "stride"_a, "padding"_a, "is_max"_a, "pad_mode"_a);
  nb::class_<nn::Dropout, nn::Layer>(nn, "Dropout").def(nb::init<float>(), "ratio"_a = 0.5f);
  auto rnn_options = [](int64_t layers, std::string nonlinearity, bool bias, bool batch_first,
                        float dropout, bool bidirectional) {
    return nn::RNNBase::Options{layers,       std::move(nonlinearity), bias, batch_first, dropout,
                                bidirectional};
  };
  nb::class_<nn::RNNBase, nn::Layer>(nn, "RNNBase");
  nb::class_<nn::RNN, nn::RNNBase>(nn, "RNN").def(
      "__init__",
      [rnn_options](nn::RNN* self, int64_t in, int64_t hidden, int64_t layers, std::string nl,
                    bool bias, bool batch_first, float dropout, bool bidirectional) {
        new (self)
            nn::RNN(in, hidden, rnn_options(layers, nl, bias, batch_first, dropout, bidirectional));
      },
      "input_size"_a, "hidden_size"_a, "num_layers"_a = 1, "nonlinearity"_a = "tanh",
      "bias"_a = true, "batch_first"_a = false, "dropout"_a = 0.0f, "bidirectional"_a = false);
  nb::class_<nn::LSTM, nn::RNNBase>(nn, "LSTM")
      .def(
          "__init__",
          [rnn_options](nn::LSTM* self, int64_t in, int64_t hidden, int64_t layers, bool bias,
                        bool batch_first, float dropout, bool bidirectional) {
            new (self) nn::LSTM(
                in, hidden, rnn_options(layers, "tanh", bias, batch_first, dropout, bidirectional));
          },
          "input_size"_a, "hidden_size"_a, "num_layers"_a = 1, "bias"_a = true,
          "batch_first"_a = false, "dropout"_a = 0.0f, "bidirectional"_a = false);

  nn.def("softmax_cross_entropy", &nn::SoftmaxCrossEntropy, "x"_a, "t"_a);
  nn.def("cross_entropy", &nn::CrossEntropy, "p"_a, "t"_a);
  nn.def("binary_cross_entropy", &nn::BinaryCrossEntropy, "p"_a, "t"_a);
  nn.def("mse_loss", &nn::MseLoss, "x"_a, "t"_a);
  nn.def("ranking_loss", &nn::RankingLoss, "pos"_a, "neg"_a, "margin"_a = 0.2);
  nn.def("cossim", &nn::CosSim, "a"_a, "b"_a);
  nn.def("add_bias", &nn::AddBias, "x"_a, "b"_a, "axis"_a = 0);

  nb::class_<nn::Model, nn::Layer, PyModel<nn::Model>>(nn, "Model")
      .def(nb::init<>())
      .def("_compile", &nn::Model::Compile, "inputs"_a, "is_train"_a, "use_graph"_a, "sequential"_a)
      .def("_call_step", &nn::Model::Call, "inputs"_a, "tag"_a)
      .def("_step_key", &nn::Model::StepKey, "inputs"_a, "tag"_a)
      .def("_has_step", &nn::Model::HasStep, "key"_a)
      .def("_train", &nn::Model::Train, "mode"_a)
      .def("_graph", &nn::Model::Graph, "mode"_a, "sequential"_a)
      .def("_save_states", &nn::Model::SaveStates, "path"_a, "aux"_a)
      .def("_load_states", &nn::Model::LoadStates, "path"_a)
      .def_prop_ro("training", &nn::Model::training)
      .def_prop_ro("graph_mode", &nn::Model::graph_mode)
      .def_prop_ro("sequential", &nn::Model::sequential)
      .def_prop_ro("num_captured_steps", &nn::Model::num_captured_steps)
      .def(
          "captured_steps",
          [](const nn::Model& m) {
            std::vector<const nn::GraphStep*> out;
            for (auto& [key, step] : m.captured_steps()) out.push_back(&step);
            return out;
          },
          nb::rv_policy::reference_internal,
          "The captured graph-mode steps (one per mode and input signature).");

  nb::class_<nn::GraphStep>(nn, "GraphStep")
      .def(nb::init<>())
      .def("capture", &nn::GraphStep::Capture, "inputs"_a, "fn"_a)
      .def("replay", &nn::GraphStep::Replay, "inputs"_a)
      .def("reset", &nn::GraphStep::Reset)
      .def_prop_ro("captured", &nn::GraphStep::captured)
      .def_prop_ro("arena_bytes", &nn::GraphStep::arena_bytes)
      .def_prop_ro("num_ops", &nn::GraphStep::num_ops);
  nn.def("save_states_file", &nn::SaveStatesFile, "path"_a, "states"_a, "aux"_a = nn::TensorMap{});
  nn.def(
      "load_states_file",
      [](const std::string& path) {
        nn::StatesFile f = nn::LoadStatesFile(path);
        return std::make_pair(std::move(f.states), std::move(f.aux));
      },
      "path"_a);

  nb::module_ o = m.def_submodule("opt", "optimizers and learning-rate schedulers");
  nb::class_<opt::Scheduler>(o, "Scheduler")
      .def(
          "__call__", [](const opt::Scheduler& s, int64_t step) { return s(step); }, "step"_a);
  nb::class_<opt::Constant, opt::Scheduler>(o, "Constant").def(nb::init<double>(), "value"_a);
  nb::class_<opt::ExponentialDecay, opt::Scheduler>(o, "ExponentialDecay")
      .def(nb::init<double, int64_t, double, bool>(), "init_value"_a, "decay_steps"_a,
           "decay_rate"_a, "staircase"_a = false);
  nb::class_<opt::Optimizer>(o, "Optimizer")
      .def("update", &opt::Optimizer::Update, "param"_a, "grad"_a)
      .def("step", &opt::Optimizer::Step)
      .def(
          "backward_and_update",
          [](opt::Optimizer& self, const Tensor& loss) { self.BackwardAndUpdate(loss); }, "loss"_a)
      .def("get_states", &opt::Optimizer::GetStates)
      .def("set_states", &opt::Optimizer::SetStates, "states"_a)
      .def_prop_ro("step_count", &opt::Optimizer::step)
      .def_prop_ro("learning_rate", &opt::Optimizer::learning_rate);
  using Sched = std::shared_ptr<const opt::Scheduler>;
  nb::class_<opt::SGD, opt::Optimizer>(o, "SGD").def(
      "__init__",
      [](opt::SGD* self, double lr, double momentum, double dampening, double wd, bool nesterov,
         Sched sched) {
        new (self) opt::SGD(opt::SGD::Options{lr, momentum, dampening, wd, nesterov}, sched);
      },
      "lr"_a, "momentum"_a, "dampening"_a, "weight_decay"_a, "nesterov"_a, "scheduler"_a.none());
  nb::class_<opt::RMSProp, opt::Optimizer>(o, "RMSProp")
      .def(
          "__init__",
          [](opt::RMSProp* self, double lr, double rho, double eps, double wd, Sched sched) {
            new (self) opt::RMSProp(opt::RMSProp::Options{lr, rho, eps, wd}, sched);
          },
          "lr"_a, "rho"_a, "epsilon"_a, "weight_decay"_a, "scheduler"_a.none());
  nb::class_<opt::AdaGrad, opt::Optimizer>(o, "AdaGrad")
      .def(
          "__init__",
          [](opt::AdaGrad* self, double lr, double eps, double wd, Sched sched) {
            new (self) opt::AdaGrad(opt::AdaGrad::Options{lr, eps, wd}, sched);
          },
          "lr"_a, "epsilon"_a, "weight_decay"_a, "scheduler"_a.none());
  nb::class_<opt::Adam, opt::Optimizer>(o, "Adam").def(
      "__init__",
      [](opt::Adam* self, double lr, double b1, double b2, double eps, double wd, Sched sched) {
        new (self) opt::Adam(opt::Adam::Options{lr, b1, b2, eps, wd}, sched);
      },
      "lr"_a, "beta_1"_a, "beta_2"_a, "epsilon"_a, "weight_decay"_a, "scheduler"_a.none());
}

}  // namespace singa
