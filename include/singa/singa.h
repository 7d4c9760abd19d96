// The umbrella header: everything a C++ user of singa needs.
//
//   #include "singa/singa.h"
//   singa::Tensor y = singa::CallOp("Relu", {x})[0];
#pragma once

#include "singa/core/device.h"
#include "singa/core/dtype.h"
#include "singa/core/error.h"
#include "singa/core/mempool.h"
#include "singa/core/parallel.h"
#include "singa/core/shape.h"
#include "singa/core/tensor.h"
#include "singa/ops/op.h"
#include "singa/autograd/autograd.h"
#include "singa/nn/functional.h"
#include "singa/nn/layer.h"
#include "singa/nn/layers.h"
#include "singa/nn/model.h"
#include "singa/opt/optimizer.h"
