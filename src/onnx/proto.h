// Conversions from the generated onnx:: protobuf types (compiled at build
// time from the onnx-ml.proto that the installed onnx package ships) to
// singa's: tensors (inline, raw or external data), attributes and value
// types. Only src/onnx includes this header.
#pragma once

#include <string>

#include "onnx-ml.pb.h"
#include "singa/onnx/inspect.h"
#include "singa/onnx/sonnx.h"
#include "singa/ops/op.h"

namespace singa::sonnx {

// Bits per element of the types ONNX packs several to a byte in tensor data
// (int4, uint4, float4e2m1: 4; int2, uint2: 2), lowest bits first; 0 for
// the rest. In memory singa holds them one per byte.
int PackedBits(DType dt);

// A TensorProto's value on `device`. External data is read from below
// `base_dir` (the model's folder) and refused when its path leaves it.
// `what` names the tensor's owner for error messages ("initializer 'w'").
Tensor TensorFromProto(const onnx::TensorProto& proto, const std::string& base_dir, Device device,
                       const std::string& what);

// An attribute as the op registry takes it (a type: its serialized
// TypeProto). Graph attributes are the reader's to read; they, sparse
// tensors and type lists raise UnsupportedOp naming `where` and the attribute.
AttrValue AttrFromProto(const onnx::AttributeProto& attr, const std::string& base_dir,
                        Device device, const std::string& where);

// A graph input's or output's declared type; raises UnsupportedOp for
// non-tensor types (sequences, maps, optionals, sparse tensors).
ValueInfo ValueInfoFromProto(const onnx::ValueInfoProto& info, const std::string& what);

// Reads the model as Prepare does, but each node it would refuse is added
// to `issues` (with why) instead of thrown, and initializer data is not
// read (reader.cc; `singa info`). Errors of the whole graph (a cycle, a
// missing value) still throw.
void CheckModel(onnx::ModelProto& model, const std::string& base_dir,
                std::vector<NodeIssue>& issues);

}  // namespace singa::sonnx
