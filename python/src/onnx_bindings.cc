// The ONNX import half of the binding (singa._singa.sonnx): Prepare and
// SingaRep as they are in C++; python/singa/sonnx.py adds SINGA's names
// (prepare, SingaBackend, SONNXModel) on top.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "nn_bindings.h"
#include "singa/onnx/export.h"
#include "singa/onnx/model.h"
#include "singa/onnx/sonnx.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace singa {

// A numpy array's memory as a tensor, not copied (bindings.cc).
Tensor BorrowNumpy(nb::handle array);

namespace {

// A graph value from Python: None (an empty optional), a list or tuple of
// tensors (a sequence), a tensor, or a numpy array (SingaRep.run passes
// arrays of plain dtypes as they are). An array is read in place: the
// caller's reference keeps it alive through the call, and the run copies it
// wherever it could keep it longer (Block::borrowed).
sonnx::Value ToValue(nb::handle h) {
  if (h.is_none()) return {};
  if (nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h)) {
    TensorList elements;
    for (nb::handle e : h) elements.push_back(nb::cast<Tensor>(e));
    return sonnx::Value::Sequence(std::move(elements));
  }
  Tensor t;
  if (nb::try_cast(h, t)) return t;
  return BorrowNumpy(h);
}

nb::object FromValue(const sonnx::Value& v) {
  if (v.is_none()) return nb::none();
  if (!v.is_sequence()) return nb::cast(v.tensor());
  nb::list elements;
  for (const Tensor& t : v.sequence()) elements.append(nb::cast(t));
  return elements;
}

}  // namespace

void BindOnnx(nb::module_& m) {
  nb::module_ o = m.def_submodule("sonnx", "ONNX import (prepare, SingaRep) and export (to_onnx)");
  nb::class_<sonnx::ValueInfo>(o, "ValueInfo")
      .def_ro("name", &sonnx::ValueInfo::name)
      .def_prop_ro("dtype",
                   [](const sonnx::ValueInfo& v) -> std::optional<DType> {
                     if (v.dtype == DType::kUndefined) return std::nullopt;  // not declared
                     return v.dtype;
                   })
      .def_ro("dims", &sonnx::ValueInfo::dims)
      .def_ro("dim_params", &sonnx::ValueInfo::dim_params)
      .def_ro("has_shape", &sonnx::ValueInfo::has_shape)
      .def_ro("sequence", &sonnx::ValueInfo::sequence)
      .def_ro("optional", &sonnx::ValueInfo::optional)
      .def("__repr__", [](const sonnx::ValueInfo& v) {
        return "ValueInfo(" + v.name + ", " + std::string(Name(v.dtype)) + ")";
      });
  nb::class_<sonnx::SingaRep>(o, "SingaRep")
      .def(
          "run",
          [](const sonnx::SingaRep& rep, const nb::sequence& inputs, int last_layers,
             const std::vector<std::string>& aux_output) {
            sonnx::ValueList values, out;
            for (nb::handle x : inputs) values.push_back(ToValue(x));
            {
              nb::gil_scoped_release release;
              out = rep.RunValues(values, last_layers, aux_output);
            }
            nb::list results;
            for (const sonnx::Value& v : out) results.append(FromValue(v));
            return results;
          },
          "inputs"_a, "last_layers"_a = -1, "aux_output"_a = std::vector<std::string>())
      .def(
          "profile",
          [](const sonnx::SingaRep& rep, const nb::sequence& inputs, int last_layers,
             const std::vector<std::string>& aux_output) {
            sonnx::ValueList values;
            for (nb::handle x : inputs) values.push_back(ToValue(x));
            sonnx::RunProfile p;
            {
              nb::gil_scoped_release release;
              p = rep.Profile(values, last_layers, aux_output);
            }
            nb::list outputs, nodes;
            for (const sonnx::Value& v : p.outputs) outputs.append(FromValue(v));
            for (const sonnx::NodeProfile& n : p.nodes) {
              nb::dict d;
              d["op_type"] = n.op_type;
              d["name"] = n.name;
              d["inputs"] = n.inputs;
              d["kernels"] = n.kernels;
              d["start_us"] = n.start_us;
              d["duration_us"] = n.duration_us;
              nodes.append(d);
            }
            return nb::make_tuple(outputs, nodes, p.duration_us, p.planned, p.replayed,
                                  p.ChromeTrace());
          },
          "inputs"_a, "last_layers"_a = -1, "aux_output"_a = std::vector<std::string>(),
          "(outputs, nodes, duration_us, planned, replayed, chrome_trace): SingaRep::Profile.")
      .def_prop_ro("params", &sonnx::SingaRep::params)
      .def_prop_ro("inputs", &sonnx::SingaRep::inputs)
      .def("set_batch_size", &sonnx::SingaRep::SetBatchSize, "batch"_a)
      .def("adopt_batch_size", &sonnx::SingaRep::AdoptBatchSize, "inputs"_a)
      .def_prop_ro("outputs", &sonnx::SingaRep::outputs)
      .def_prop_ro("num_nodes", &sonnx::SingaRep::num_nodes)
      .def_prop_ro("node_op_types", &sonnx::SingaRep::node_op_types)
      .def_prop_ro("node_output_names", &sonnx::SingaRep::node_output_names)
      .def_prop_ro("ir_version", &sonnx::SingaRep::ir_version)
      .def_prop_ro("device", &sonnx::SingaRep::device)
      .def_prop_rw("use_plan", &sonnx::SingaRep::use_plan, &sonnx::SingaRep::set_use_plan)
      .def_prop_ro("num_plans", &sonnx::SingaRep::num_plans)
      .def_prop_ro("plan_arena_bytes", &sonnx::SingaRep::plan_arena_bytes)
      .def_prop_ro("planned_op_types", &sonnx::SingaRep::planned_op_types)
      .def("opset", &sonnx::SingaRep::opset, "domain"_a = "")
      .def("cancel", &sonnx::SingaRep::Cancel,
           "Stops the runs in progress on this model (from any thread): they raise Cancelled "
           "at their next Loop, Scan or SequenceMap iteration.");
  o.def(
      "prepare",
      [](const std::string& path, Device device) {
        nb::gil_scoped_release release;
        return sonnx::Prepare(path, device);
      },
      "path"_a, "device"_a = Device::Cpu(), "Reads an ONNX file into a SingaRep.");
  o.def(
      "prepare_bytes",
      [](nb::bytes bytes, Device device, const std::string& base_dir) {
        // The bytes object stays referenced (and immutable) for the call.
        const std::string_view data(bytes.c_str(), bytes.size());
        nb::gil_scoped_release release;
        return sonnx::PrepareFromBytes(data, device, base_dir);
      },
      "model"_a, "device"_a = Device::Cpu(), "base_dir"_a = "",
      "Reads a serialized ModelProto; external data is read below base_dir.");

  nb::class_<sonnx::SONNXModel, nn::Model, PyModel<sonnx::SONNXModel>>(o, "SONNXModel")
      .def(nb::init<std::shared_ptr<sonnx::SingaRep>>(), "rep"_a)
      .def_prop_ro("rep", &sonnx::SONNXModel::rep);
  o.def("tracing_enabled", &TracingEnabled);
  o.def("set_tracing", &SetTracing, "on"_a,
        "While on, records kept for the export keep their inputs' values.");
  auto options = [](const std::string& model_name, int opset, bool dynamic_batch, bool training,
                    std::vector<std::string> input_names, std::vector<std::string> output_names) {
    sonnx::ExportOptions o;
    o.model_name = model_name;
    o.opset = opset;
    o.dynamic_batch = dynamic_batch;
    o.training = training;
    o.input_names = std::move(input_names);
    o.output_names = std::move(output_names);
    return o;
  };
  o.def(
      "to_onnx",
      [options](const TensorList& inputs, const TensorList& outputs, const std::string& model_name,
                int opset, bool dynamic_batch, bool training, std::vector<std::string> input_names,
                std::vector<std::string> output_names) {
        std::string bytes;
        {
          nb::gil_scoped_release release;
          bytes = sonnx::ToOnnx(inputs, outputs,
                                options(model_name, opset, dynamic_batch, training,
                                        std::move(input_names), std::move(output_names)));
        }
        return nb::bytes(bytes.data(), bytes.size());
      },
      "inputs"_a, "outputs"_a, "model_name"_a = "sonnx", "opset"_a = 0, "dynamic_batch"_a = false,
      "training"_a = false, "input_names"_a = std::vector<std::string>(),
      "output_names"_a = std::vector<std::string>(),
      "The graph from inputs to outputs (traced from the autograd records) as a serialized "
      "ModelProto.");
  o.def(
      "save_onnx",
      [options](const std::string& path, const TensorList& inputs, const TensorList& outputs,
                const std::string& model_name, int opset, bool dynamic_batch, bool training,
                std::vector<std::string> input_names, std::vector<std::string> output_names) {
        nb::gil_scoped_release release;
        sonnx::SaveOnnx(path, inputs, outputs,
                        options(model_name, opset, dynamic_batch, training, std::move(input_names),
                                std::move(output_names)));
      },
      "path"_a, "inputs"_a, "outputs"_a, "model_name"_a = "sonnx", "opset"_a = 0,
      "dynamic_batch"_a = false, "training"_a = false, "input_names"_a = std::vector<std::string>(),
      "output_names"_a = std::vector<std::string>(),
      "Exports to path atomically (a temporary file renamed into place).");
}

}  // namespace singa
