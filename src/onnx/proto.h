// Conversions from the generated onnx:: protobuf types (compiled at build
// time from the onnx-ml.proto that the installed onnx package ships) to
// singa's: tensors (inline, raw or external data), attributes and value
// types. Only src/onnx includes this header.
#pragma once

#include <string>

#include "onnx-ml.pb.h"
#include "singa/onnx/sonnx.h"
#include "singa/ops/op.h"

namespace singa::sonnx {

// A TensorProto's value on `device`. External data is read from below
// `base_dir` (the model's folder) and refused when its path leaves it.
// `what` names the tensor's owner for error messages ("initializer 'w'").
Tensor TensorFromProto(const onnx::TensorProto& proto, const std::string& base_dir, Device device,
                       const std::string& what);

// An attribute as the op registry takes it. Graph, sparse-tensor and type
// attributes raise UnsupportedOp naming `where` and the attribute.
AttrValue AttrFromProto(const onnx::AttributeProto& attr, const std::string& base_dir,
                        Device device, const std::string& where);

// A graph input's or output's declared type; raises UnsupportedOp for
// non-tensor types (sequences, maps, optionals, sparse tensors).
ValueInfo ValueInfoFromProto(const onnx::ValueInfoProto& info, const std::string& what);

}  // namespace singa::sonnx
