#include "op_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "singa/autograd/autograd.h"

namespace singa::testing {

Tensor RandomTensor(const Shape& shape, DType dtype, uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(NumElements(shape));
  for (double& x : v) x = dist(rng);
  return Tensor::FromVector<double>(shape, v).AsType(dtype);
}

double CloseRatio(const Tensor& a, const Tensor& b, double rtol, double atol) {
  EXPECT_EQ(a.shape(), b.shape());
  if (a.shape() != b.shape()) return INFINITY;
  auto va = a.ToVector<double>(), vb = b.ToVector<double>();
  double worst = 0;
  for (size_t i = 0; i < va.size(); ++i) {
    if (std::isnan(va[i]) && std::isnan(vb[i])) continue;
    worst = std::max(worst, std::abs(va[i] - vb[i]) / (atol + rtol * std::abs(vb[i])));
  }
  return worst;
}

namespace {

Tensor NonContiguous(const Tensor& t) {
  if (t.ndim() < 2) return t;
  std::vector<int64_t> perm(t.ndim());
  for (int64_t i = 0; i < t.ndim(); ++i) perm[i] = t.ndim() - 1 - i;
  return t.Permute(perm).Contiguous().Permute(perm);
}

TensorList Run(const OpRow& row, const TensorList& inputs, KernelVariant v) {
  KernelVariantGuard guard(v);
  const OpSchema& schema = OpRegistry::Get(row.op, kLatestOpset, row.domain);
  return schema.Run(inputs, schema.ParseAttrs(row.attrs, inputs), row.num_outputs);
}

TensorList OnDevice(const TensorList& ts, Device d) {
  TensorList out;
  for (const Tensor& t : ts) out.push_back(t.defined() ? t.ToDevice(d) : t);
  return out;
}

}  // namespace

bool HasGpu() { return Device::NumCudaGpus() > 0; }

void ExpectSameOnGpu(const TensorList& gpu, const TensorList& cpu, double rtol, double atol,
                     const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  for (size_t i = 0; i < gpu.size(); ++i) {
    if (!cpu[i].defined()) continue;
    ASSERT_TRUE(gpu[i].defined()) << what << " output " << i;
    EXPECT_EQ(gpu[i].device().type, DeviceType::kCuda) << what << " output " << i;
    EXPECT_EQ(gpu[i].dtype(), cpu[i].dtype()) << what << " output " << i;
    EXPECT_LE(CloseRatio(gpu[i].ToDevice(Device::Cpu()), cpu[i], rtol, atol), 1.0)
        << what << " output " << i << " GPU vs CPU";
  }
}

void CheckRow(const OpRow& row) {
  const OpSchema& schema = OpRegistry::Get(row.op, kLatestOpset, row.domain);
  for (DType dt : row.dtypes) {
    SCOPED_TRACE(row.op + " " + std::string(Name(dt)));
    TensorList inputs;
    uint64_t seed = 1;
    for (const Shape& s : row.inputs) inputs.push_back(RandomTensor(s, dt, seed++));
    for (const Tensor& t : row.fixed) inputs.push_back(t);
    TensorList fast = Run(row, inputs, KernelVariant::kFast);
    // 16-bit floats: both kernels round to 8 or 11 significant bits.
    double rtol = IsFloat(dt) && SizeOf(dt) == 2 ? 2e-2 : row.rtol;
    double atol = IsFloat(dt) && SizeOf(dt) == 2 ? 2e-2 : row.atol;
    if (schema.reference) {
      TensorList ref = Run(row, inputs, KernelVariant::kReference);
      ASSERT_EQ(fast.size(), ref.size());
      for (size_t i = 0; i < fast.size(); ++i)
        EXPECT_LE(CloseRatio(fast[i], ref[i], rtol, atol), 1.0)
            << "output " << i << " fast vs reference";
    }
    TensorList nc_inputs;
    for (size_t i = 0; i < inputs.size(); ++i)
      nc_inputs.push_back(i < row.inputs.size() ? NonContiguous(inputs[i]) : inputs[i]);
    TensorList nc = Run(row, nc_inputs, KernelVariant::kFast);
    for (size_t i = 0; i < fast.size(); ++i)
      EXPECT_LE(CloseRatio(nc[i], fast[i], rtol, atol), 1.0) << "output " << i << " non-contiguous";
    if (HasGpu()) {
      const Device gpu = Device::Cuda(0);
      ExpectSameOnGpu(Run(row, OnDevice(inputs, gpu), KernelVariant::kFast), fast, rtol, atol,
                      "contiguous");
      ExpectSameOnGpu(Run(row, OnDevice(nc_inputs, gpu), KernelVariant::kFast), fast, rtol, atol,
                      "non-contiguous");
    }
    SpecList specs =
        schema.Infer(inputs, schema.ParseAttrs(row.attrs, inputs).get(), row.num_outputs);
    for (size_t i = 0; i < fast.size(); ++i) {
      EXPECT_EQ(fast[i].shape(), specs[i].shape) << "output " << i << " vs shape inference";
      EXPECT_EQ(fast[i].dtype(), specs[i].dtype) << "output " << i << " vs dtype inference";
    }
  }
}

TensorList Grads(const std::string& op, const TensorList& inputs, const AttrMap& attrs,
                 KernelVariant v, int num_outputs, int opset) {
  KernelVariantGuard guard(v);
  TensorList leaves;
  for (const Tensor& t : inputs) {
    leaves.push_back(t.Clone());
    leaves.back().set_stores_grad(true);
  }
  Tensor y = CallOp(op, leaves, attrs, opset, num_outputs)[0];
  Tensor dy = RandomTensor(y.shape(), y.dtype(), 99).ToDevice(y.device());
  TensorList out(leaves.size());
  for (auto& [p, g] : autograd::Gradients(y, dy))
    for (size_t i = 0; i < leaves.size(); ++i)
      if (p.id() == leaves[i].id()) out[i] = g;
  return out;
}

void CheckGrads(const std::string& op, const std::vector<Shape>& shapes, const AttrMap& attrs,
                double rtol, double atol, int num_outputs, int opset, bool positive_last) {
  TensorList inputs;
  uint64_t seed = 1;
  for (const Shape& s : shapes) inputs.push_back(RandomTensor(s, DType::kFloat32, seed++));
  // A variance input must be positive.
  if (positive_last) inputs.back() = RandomTensor(shapes.back(), DType::kFloat32, 99, 0.1, 2.0);
  TensorList fast = Grads(op, inputs, attrs, KernelVariant::kFast, num_outputs, opset);
  TensorList ref = Grads(op, inputs, attrs, KernelVariant::kReference, num_outputs, opset);
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_TRUE(fast[i].defined() && ref[i].defined()) << op << " input " << i;
    EXPECT_LE(CloseRatio(fast[i], ref[i], rtol, atol), 1.0)
        << op << " gradient of input " << i << " fast vs reference";
  }
  if (HasGpu()) {
    // The backward's ops on the GPU (dy is drawn on the host from the same seed).
    const TensorList gpu = Grads(op, OnDevice(inputs, Device::Cuda(0)), attrs, KernelVariant::kFast,
                                 num_outputs, opset);
    ExpectSameOnGpu(gpu, fast, rtol, atol, op + " gradients");
  }
}

}  // namespace singa::testing
