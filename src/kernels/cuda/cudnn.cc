// The CUDA device's cuDNN kernels: convolution (forward, backward data and
// filter), pooling and batch normalization on dense NCHW tensors. One cuDNN
// handle per GPU, on the GPU's stream. A convolution's algorithms are the
// fastest cuDNN measures for its shape on first use (kept per shape, as
// cudnn.benchmark does); float32 and float64 use FMA kernels only (no TF32:
// the results match the CPU's), float16 tensor cores.
//
// cuDNN 9 marks these entry points (its "legacy" API) deprecated in favour of
// its graph API; they remain supported throughout version 9.
#include <cudnn.h>

#include <map>
#include <mutex>
#include <tuple>

#include "kernels/cuda/cuda.h"
#include "singa/core/error.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace singa::cuda {
namespace {

void Check(cudnnStatus_t s, const char* what) {
  SINGA_CHECK(s == CUDNN_STATUS_SUCCESS, Error,
              "cuDNN: " << what << ": " << cudnnGetErrorString(s));
}

// The handle of the GPU a tensor lives on, bound to that GPU's stream.
cudnnHandle_t HandleOf(const Tensor& t) {
  static std::mutex mu;
  static auto* handles = new std::map<int, cudnnHandle_t>();
  const int index = t.device().index;
  void* stream = Stream(index);  // makes the GPU current
  std::lock_guard<std::mutex> lock(mu);
  cudnnHandle_t& h = (*handles)[index];
  if (!h) {
    Check(cudnnCreate(&h), "cudnnCreate");
    Check(cudnnSetStream(h, static_cast<cudaStream_t>(stream)), "cudnnSetStream");
  }
  return h;
}

cudnnDataType_t DataType(DType d) {
  switch (d) {
    case DType::kFloat32:
      return CUDNN_DATA_FLOAT;
    case DType::kFloat64:
      return CUDNN_DATA_DOUBLE;
    case DType::kFloat16:
      return CUDNN_DATA_HALF;
    default:
      throw DTypeError("cuDNN: no kernel for " + std::string(Name(d)));
  }
}
// Accumulation (and alpha/beta) type.
cudnnDataType_t ComputeType(DType d) {
  return d == DType::kFloat64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

// alpha = 1 and beta = 0 or 1 in the compute type cuDNN reads them in.
struct Scalars {
  explicit Scalars(DType d) : dbl(d == DType::kFloat64) {}
  const void* one() const { return dbl ? static_cast<const void*>(&d1) : &f1; }
  const void* zero() const { return dbl ? static_cast<const void*>(&d0) : &f0; }
  bool dbl;
  float f1 = 1, f0 = 0;
  double d1 = 1, d0 = 0;
};

// cuDNN's descriptors want at least 4 dimensions: 1-D windows gain a
// trailing spatial dimension of size 1.
std::vector<int> Dims4(const Shape& s) {
  std::vector<int> d(s.begin(), s.end());
  while (d.size() < 4) d.push_back(1);
  return d;
}
std::vector<int> Ints(const std::vector<int64_t>& v, int fill) {
  std::vector<int> d(v.begin(), v.end());
  while (d.size() < 2) d.push_back(fill);
  return d;
}

struct TensorDesc {
  TensorDesc(const Shape& shape, DType dtype) {
    Check(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor");
    const std::vector<int> dims = Dims4(shape);
    std::vector<int> strides(dims.size(), 1);
    for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
      strides[i] = strides[i + 1] * dims[i + 1];
    Check(cudnnSetTensorNdDescriptor(d, DataType(dtype), static_cast<int>(dims.size()), dims.data(),
                                     strides.data()),
          "cudnnSetTensorNdDescriptor");
  }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  cudnnTensorDescriptor_t d = nullptr;
};

struct FilterDesc {
  FilterDesc(const Shape& shape, DType dtype) {
    Check(cudnnCreateFilterDescriptor(&d), "cudnnCreateFilterDescriptor");
    const std::vector<int> dims = Dims4(shape);
    Check(cudnnSetFilterNdDescriptor(d, DataType(dtype), CUDNN_TENSOR_NCHW,
                                     static_cast<int>(dims.size()), dims.data()),
          "cudnnSetFilterNdDescriptor");
  }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
  cudnnFilterDescriptor_t d = nullptr;
};

// ---- convolution --------------------------------------------------------------

bool Symmetric(const Window& w) { return w.pad_begin == w.pad_end; }

// The part of a padded tensor `p` that holds an unpadded one of `shape`.
Tensor Interior(const Tensor& p, const Shape& shape, const Window& w) {
  Tensor v = p;
  for (size_t i = 0; i < w.pad_begin.size(); ++i)
    v = v.Slice(static_cast<int64_t>(2 + i), w.pad_begin[i], w.pad_begin[i] + shape[2 + i]);
  return v;
}

// An NCHW shape with w's pads added to its spatial dimensions.
Shape PaddedShape(Shape s, const Window& w) {
  for (size_t i = 0; i < w.pad_begin.size(); ++i) s[2 + i] += w.pad_begin[i] + w.pad_end[i];
  return s;
}

// x with w's unequal pads made explicit (zeros around a copy), or x itself.
Tensor Padded(const Tensor& x, const Window& w) {
  if (Symmetric(w)) return x;
  Tensor p(PaddedShape(x.shape(), w), x.dtype(), x.device());
  Fill(p, 0);
  Copy(x, Interior(p, x.shape(), w));
  return p;
}

struct ConvDesc {
  ConvDesc(const Window& w, DType dtype, int64_t group) {
    Check(cudnnCreateConvolutionDescriptor(&d), "cudnnCreateConvolutionDescriptor");
    // Unequal pads are made explicit (Padded): cuDNN then pads nothing.
    const std::vector<int64_t> none(w.pad_begin.size(), 0);
    const std::vector<int> pad = Ints(Symmetric(w) ? w.pad_begin : none, 0),
                           stride = Ints(w.stride, 1), dilation = Ints(w.dilation, 1);
    Check(cudnnSetConvolutionNdDescriptor(d, static_cast<int>(pad.size()), pad.data(),
                                          stride.data(), dilation.data(), CUDNN_CROSS_CORRELATION,
                                          ComputeType(dtype)),
          "cudnnSetConvolutionNdDescriptor");
    Check(cudnnSetConvolutionGroupCount(d, static_cast<int>(group)),
          "cudnnSetConvolutionGroupCount");
  }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
  cudnnConvolutionDescriptor_t d = nullptr;
};

enum class ConvKind { kForward, kData, kFilter };

// An algorithm cuDNN measured fastest for one shape, and its workspace.
struct Algo {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t workspace = 0;
};

// Workspaces above this are not considered (cuDNN's fastest algorithms can
// ask for gigabytes).
constexpr size_t kMaxWorkspace = size_t{1} << 30;

// The algorithm of cuDNN's measurements (fastest first) with the smallest
// workspace among those within 5% of the fastest one's time: closer times
// are the measurement's noise, and a large workspace is memory taken from
// the pool on every call.
template <class Perf>
Algo Pick(const Perf* perf, int count, const char* what) {
  const Perf* pick = nullptr;
  float fastest = 0;
  for (int i = 0; i < count; ++i) {
    const Perf& p = perf[i];
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > kMaxWorkspace) continue;
    if (!pick) {
      pick = &p;
      fastest = p.time;
    } else if (p.time <= fastest * 1.05f && p.memory < pick->memory) {
      pick = &p;
    }
  }
  if (!pick) throw UnsupportedOp(std::string("cuDNN: no ") + what + " algorithm for this shape");
  return {static_cast<int>(pick->algo), pick->mathType, pick->memory};
}

// The tensors of one convolution call and their descriptors. x is the
// (explicitly padded) input, y the output; for the backward kinds dx / dy.
struct ConvCall {
  ConvCall(const Tensor& x, const Tensor& w, const Tensor& y, const Window& win, int64_t group)
      : dt(w.dtype()),
        xd(x.shape(), dt),
        wd(w.shape(), dt),
        yd(y.shape(), dt),
        cd(win, dt, group),
        key(std::to_string(x.device().index) + std::string(Name(dt)) + ToString(x.shape()) +
            ToString(w.shape()) + ToString(y.shape()) + ToString(Shape(win.stride)) +
            ToString(Shape(win.dilation)) + ToString(Shape(win.pad_begin)) +
            ToString(Shape(win.pad_end)) + std::to_string(group)) {
    Check(cudnnSetConvolutionMathType(
              cd.d, dt == DType::kFloat16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
          "cudnnSetConvolutionMathType");
  }
  DType dt;
  TensorDesc xd;
  FilterDesc wd;
  TensorDesc yd;
  ConvDesc cd;
  std::string key;
};

// The algorithm of `kind` for this call, measured on first use.
Algo FindAlgo(ConvKind kind, cudnnHandle_t h, const ConvCall& c) {
  static std::mutex mu;
  static auto* algos = new std::map<std::pair<int, std::string>, Algo>();
  const auto key = std::make_pair(static_cast<int>(kind), c.key);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = algos->find(key);
    if (it != algos->end()) return it->second;
  }
  constexpr int kMax = 16;
  int n = 0;
  Algo a;
  if (kind == ConvKind::kForward) {
    cudnnConvolutionFwdAlgoPerf_t perf[kMax];
    Check(cudnnFindConvolutionForwardAlgorithm(h, c.xd.d, c.wd.d, c.cd.d, c.yd.d, kMax, &n, perf),
          "cudnnFindConvolutionForwardAlgorithm");
    a = Pick(perf, n, "convolution forward");
  } else if (kind == ConvKind::kData) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
    Check(cudnnFindConvolutionBackwardDataAlgorithm(h, c.wd.d, c.yd.d, c.cd.d, c.xd.d, kMax, &n,
                                                    perf),
          "cudnnFindConvolutionBackwardDataAlgorithm");
    a = Pick(perf, n, "convolution backward data");
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
    Check(cudnnFindConvolutionBackwardFilterAlgorithm(h, c.xd.d, c.yd.d, c.cd.d, c.wd.d, kMax, &n,
                                                      perf),
          "cudnnFindConvolutionBackwardFilterAlgorithm");
    a = Pick(perf, n, "convolution backward filter");
  }
  std::lock_guard<std::mutex> lock(mu);
  return algos->emplace(key, a).first->second;
}

// A workspace of `bytes` on t's GPU, from its memory pool.
Tensor Workspace(const Tensor& t, size_t bytes) {
  return Tensor({static_cast<int64_t>(std::max<size_t>(bytes, 1))}, DType::kUInt8, t.device());
}

// The bias [M] added over y's channels.
void AddBias(cudnnHandle_t h, const Tensor& b, const Tensor& y) {
  Shape bs(y.ndim(), 1);
  bs[1] = y.dim(1);
  const TensorDesc bd(bs, y.dtype()), yd(y.shape(), y.dtype());
  const Scalars s(y.dtype());
  const Tensor bc = b.Contiguous();
  Check(cudnnAddTensor(h, s.one(), bd.d, bc.raw_data(), s.one(), yd.d, y.raw_data()),
        "cudnnAddTensor");
}

}  // namespace

void ConvForward(const Tensor& x_in, const Tensor& w_in, const Tensor& b, const Tensor& y,
                 const Window& win, int64_t group) {
  if (y.numel() == 0) return;
  const Tensor x = Padded(x_in.Contiguous(), win), w = w_in.Contiguous();
  const cudnnHandle_t h = HandleOf(y);
  const ConvCall c(x, w, y, win, group);
  const Algo a = FindAlgo(ConvKind::kForward, h, c);
  Check(cudnnSetConvolutionMathType(c.cd.d, a.math), "cudnnSetConvolutionMathType");
  const Tensor ws = Workspace(y, a.workspace);
  const Scalars s(c.dt);
  Check(cudnnConvolutionForward(h, s.one(), c.xd.d, x.raw_data(), c.wd.d, w.raw_data(), c.cd.d,
                                static_cast<cudnnConvolutionFwdAlgo_t>(a.algo), ws.raw_data(),
                                a.workspace, s.zero(), c.yd.d, y.raw_data()),
        "cudnnConvolutionForward");
  if (b.defined()) AddBias(h, b, y);
}

void ConvBackwardData(const Tensor& dy_in, const Tensor& w_in, const Tensor& dx, const Window& win,
                      int64_t group) {
  if (dx.numel() == 0) return;
  const Tensor dy = dy_in.Contiguous(), w = w_in.Contiguous();
  // With unequal pads cuDNN writes the gradient of the explicitly padded
  // input, whose interior is dx.
  const Tensor dxp =
      Symmetric(win) ? dx : Tensor(PaddedShape(dx.shape(), win), dx.dtype(), dx.device());
  if (dy.numel() == 0) {
    Fill(dx, 0);
    return;
  }
  const cudnnHandle_t h = HandleOf(dx);
  const ConvCall c(dxp, w, dy, win, group);
  const Algo a = FindAlgo(ConvKind::kData, h, c);
  Check(cudnnSetConvolutionMathType(c.cd.d, a.math), "cudnnSetConvolutionMathType");
  const Tensor ws = Workspace(dx, a.workspace);
  const Scalars s(c.dt);
  Check(cudnnConvolutionBackwardData(h, s.one(), c.wd.d, w.raw_data(), c.yd.d, dy.raw_data(),
                                     c.cd.d, static_cast<cudnnConvolutionBwdDataAlgo_t>(a.algo),
                                     ws.raw_data(), a.workspace, s.zero(), c.xd.d, dxp.raw_data()),
        "cudnnConvolutionBackwardData");
  if (dxp.block() != dx.block()) Copy(Interior(dxp, dx.shape(), win), dx);
}

void ConvBackwardFilter(const Tensor& dy_in, const Tensor& x_in, const Tensor& dw, const Tensor& db,
                        const Window& win, int64_t group) {
  const Tensor dy = dy_in.Contiguous();
  const cudnnHandle_t h = HandleOf(dw);
  const Scalars s(dw.dtype());
  if (dy.numel() == 0 || x_in.numel() == 0) {
    if (dw.numel()) Fill(dw, 0);
    if (db.defined() && db.numel()) Fill(db, 0);
    return;
  }
  if (dw.numel()) {
    const Tensor x = Padded(x_in.Contiguous(), win);
    const ConvCall c(x, dw, dy, win, group);
    const Algo a = FindAlgo(ConvKind::kFilter, h, c);
    Check(cudnnSetConvolutionMathType(c.cd.d, a.math), "cudnnSetConvolutionMathType");
    const Tensor ws = Workspace(dw, a.workspace);
    Check(
        cudnnConvolutionBackwardFilter(h, s.one(), c.xd.d, x.raw_data(), c.yd.d, dy.raw_data(),
                                       c.cd.d, static_cast<cudnnConvolutionBwdFilterAlgo_t>(a.algo),
                                       ws.raw_data(), a.workspace, s.zero(), c.wd.d, dw.raw_data()),
        "cudnnConvolutionBackwardFilter");
  }
  if (db.defined() && db.numel()) {
    Shape bs(dy.ndim(), 1);
    bs[1] = dy.dim(1);
    const TensorDesc dyd(dy.shape(), dy.dtype()), dbd(bs, db.dtype());
    Check(cudnnConvolutionBackwardBias(h, s.one(), dyd.d, dy.raw_data(), s.zero(), dbd.d,
                                       db.raw_data()),
          "cudnnConvolutionBackwardBias");
  }
}

// ---- pooling ------------------------------------------------------------------

namespace {

struct PoolDesc {
  PoolDesc(Pool mode, const Window& w) {
    Check(cudnnCreatePoolingDescriptor(&d), "cudnnCreatePoolingDescriptor");
    const cudnnPoolingMode_t m = mode == Pool::kMax ? CUDNN_POOLING_MAX
                                 : mode == Pool::kAverageIncludePad
                                     ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                     : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    const std::vector<int> k = Ints(w.kernel, 1), pad = Ints(w.pad_begin, 0),
                           stride = Ints(w.stride, 1);
    Check(cudnnSetPoolingNdDescriptor(d, m, CUDNN_PROPAGATE_NAN, static_cast<int>(k.size()),
                                      k.data(), pad.data(), stride.data()),
          "cudnnSetPoolingNdDescriptor");
  }
  ~PoolDesc() { cudnnDestroyPoolingDescriptor(d); }
  PoolDesc(const PoolDesc&) = delete;
  PoolDesc& operator=(const PoolDesc&) = delete;
  cudnnPoolingDescriptor_t d = nullptr;
};

}  // namespace

bool PoolTakes(const Window& w, const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  for (size_t i = 0; i < w.kernel.size(); ++i) {
    if (w.dilation[i] != 1 || w.pad_begin[i] != w.pad_end[i] || w.pad_begin[i] >= w.kernel[i])
      return false;
    if (out[i] != (in[i] + 2 * w.pad_begin[i] - w.kernel[i]) / w.stride[i] + 1) return false;
  }
  return true;
}

void PoolForward(Pool mode, const Tensor& x_in, const Tensor& y, const Window& win) {
  if (y.numel() == 0) return;
  const Tensor x = x_in.Contiguous();
  const cudnnHandle_t h = HandleOf(y);
  const PoolDesc pd(mode, win);
  const TensorDesc xd(x.shape(), x.dtype()), yd(y.shape(), y.dtype());
  const Scalars s(y.dtype());
  Check(cudnnPoolingForward(h, pd.d, s.one(), xd.d, x.raw_data(), s.zero(), yd.d, y.raw_data()),
        "cudnnPoolingForward");
}

void PoolBackward(Pool mode, const Tensor& dy_in, const Tensor& x_in, const Tensor& dx,
                  const Window& win) {
  if (dx.numel() == 0) return;
  const Tensor x = x_in.Contiguous(), dy = dy_in.Contiguous();
  if (dy.numel() == 0) {
    Fill(dx, 0);
    return;
  }
  const Tensor y(dy.shape(), dy.dtype(), dy.device());
  PoolForward(mode, x, y, win);
  const cudnnHandle_t h = HandleOf(dx);
  const PoolDesc pd(mode, win);
  const TensorDesc xd(x.shape(), x.dtype()), yd(y.shape(), y.dtype());
  const Scalars s(dx.dtype());
  Check(cudnnPoolingBackward(h, pd.d, s.one(), yd.d, y.raw_data(), yd.d, dy.raw_data(), xd.d,
                             x.raw_data(), s.zero(), xd.d, dx.raw_data()),
        "cudnnPoolingBackward");
}

// ---- batch normalization ---------------------------------------------------------

namespace {

// x as cuDNN's [N, C, S, 1] (S: the product of the spatial dims) and the
// [1, C, 1, 1] of its per-channel tensors.
struct NormDescs {
  explicit NormDescs(const Tensor& x)
      : x(Flat(x.shape()), x.dtype()),
        param({1, Flat(x.shape())[1], 1, 1},
              x.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32) {}
  static Shape Flat(const Shape& s) {
    Shape f = {s[0], s.size() > 1 ? s[1] : 1, 1, 1};
    for (size_t i = 2; i < s.size(); ++i) f[2] *= s[i];
    return f;
  }
  TensorDesc x, param;
};

constexpr cudnnBatchNormMode_t kSpatial = CUDNN_BATCHNORM_SPATIAL;

const void* Data(const Tensor& t) { return t.raw_data(); }

}  // namespace

void BatchNormInference(const Tensor& x_in, const Tensor& scale, const Tensor& bias,
                        const Tensor& mean, const Tensor& var, const Tensor& y, double epsilon) {
  if (y.numel() == 0) return;
  const Tensor x = x_in.Contiguous();
  const NormDescs d(x);
  const Scalars s(x.dtype());
  const Tensor sc = scale.Contiguous(), bi = bias.Contiguous(), m = mean.Contiguous(),
               v = var.Contiguous();
  Check(cudnnBatchNormalizationForwardInference(HandleOf(y), kSpatial, s.one(), s.zero(), d.x.d,
                                                Data(x), d.x.d, y.raw_data(), d.param.d, Data(sc),
                                                Data(bi), Data(m), Data(v), epsilon),
        "cudnnBatchNormalizationForwardInference");
}

void BatchNormTraining(const Tensor& x_in, const Tensor& scale, const Tensor& bias, const Tensor& y,
                       const Tensor& batch_mean, const Tensor& batch_var, double epsilon) {
  const Tensor x = x_in.Contiguous();
  const NormDescs d(x);
  const Scalars s(x.dtype());
  const Tensor sc = scale.Contiguous(), bi = bias.Contiguous();
  // cuDNN keeps 1 / sqrt(var + epsilon); its running statistics (not asked
  // for here) would use the unbiased variance, ONNX's use the population's.
  const Tensor inv(batch_var.shape(), batch_var.dtype(), batch_var.device());
  Check(cudnnBatchNormalizationForwardTraining(HandleOf(y), kSpatial, s.one(), s.zero(), d.x.d,
                                               Data(x), d.x.d, y.raw_data(), d.param.d, Data(sc),
                                               Data(bi), 0.0, nullptr, nullptr, epsilon,
                                               batch_mean.raw_data(), inv.raw_data()),
        "cudnnBatchNormalizationForwardTraining");
  // var = 1 / inv^2 - epsilon.
  const Tensor sq(inv.shape(), inv.dtype(), inv.device());
  BinaryOp(Binary::kMul, inv, inv, sq);
  const Tensor one = Tensor::Full({}, 1.0, inv.dtype(), inv.device());
  BinaryOp(Binary::kDiv, one, sq, sq);
  BinaryOp(Binary::kSub, sq, Tensor::Full({}, epsilon, inv.dtype(), inv.device()), batch_var);
}

void BatchNormBackward(const Tensor& dy_in, const Tensor& x_in, const Tensor& scale,
                       const Tensor& dx, const Tensor& dscale, const Tensor& dbias,
                       double epsilon) {
  const Tensor x = x_in.Contiguous(), dy = dy_in.Contiguous(), sc = scale.Contiguous();
  const NormDescs d(x);
  const Scalars s(x.dtype());
  Check(cudnnBatchNormalizationBackward(HandleOf(dx), kSpatial, s.one(), s.zero(), s.one(),
                                        s.zero(), d.x.d, Data(x), d.x.d, Data(dy), d.x.d,
                                        dx.raw_data(), d.param.d, Data(sc), dscale.raw_data(),
                                        dbias.raw_data(), epsilon, nullptr, nullptr),
        "cudnnBatchNormalizationBackward");
}

}  // namespace singa::cuda
