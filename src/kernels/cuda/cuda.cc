#include "kernels/cuda/cuda.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <numeric>

#include "singa/core/error.h"

namespace singa::cuda {
namespace {

void Check(cudaError_t e, const char* what) {
  SINGA_CHECK(e == cudaSuccess, Error, "CUDA: " << what << ": " << cudaGetErrorString(e));
}
void CheckBlas(cublasStatus_t s, const char* what) {
  SINGA_CHECK(s == CUBLAS_STATUS_SUCCESS, Error,
              "cuBLAS: " << what << ": " << cublasGetStatusString(s));
}

// Makes GPU `index` current on this thread.
void Select(int index) {
  thread_local int current = -1;
  if (current == index) return;
  Check(cudaSetDevice(index), "cudaSetDevice");
  current = index;
}

void* DeviceAlloc(size_t bytes, int index) {
  Select(index);
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess) {
    cudaGetLastError();  // clears the error: the pool frees its cache and retries
    return nullptr;
  }
  return p;
}
void DeviceFree(void* p, size_t, int index) {
  Select(index);
  cudaFree(p);
}
void DeviceFill(void* p, int byte, size_t bytes, int index) {
  Select(index);
  Check(cudaMemset(p, byte, bytes), "cudaMemset");
}

struct Gpu {
  explicit Gpu(int index) : runtime(MemBackend{DeviceAlloc, DeviceFree, DeviceFill, index}) {
    Select(index);
    Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    CheckBlas(cublasCreate(&blas), "cublasCreate");
    CheckBlas(cublasSetStream(blas, stream), "cublasSetStream");
  }
  DeviceRuntime runtime;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
};

// Lives until exit, like the CPU's runtime: blocks free into it.
Gpu& GpuOf(int index) {
  static std::mutex mu;
  static auto* gpus = new std::vector<std::unique_ptr<Gpu>>();
  std::lock_guard<std::mutex> lock(mu);
  SINGA_CHECK(index >= 0 && index < DeviceCount(), UnsupportedOp,
              "CUDA device " << index << " does not exist: this machine has " << DeviceCount()
                             << " GPU(s)");
  if (gpus->size() <= static_cast<size_t>(index)) gpus->resize(index + 1);
  auto& g = (*gpus)[index];
  if (!g) g = std::make_unique<Gpu>(index);
  return *g;
}

// The GPU of a tensor, made current; its stream.
cudaStream_t StreamOf(const Tensor& t) {
  Select(t.device().index);
  return GpuOf(t.device().index).stream;
}

// t as a kernel view over `shape` (t's shape broadcast to it).
kernels::View ViewOf(const Tensor& t, const Shape& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  SINGA_CHECK(rank <= kernels::kMaxRank, UnsupportedOp,
              "CUDA kernels take tensors of rank <= " << kernels::kMaxRank << ", not " << rank);
  SINGA_CHECK(t.ndim() <= rank, ShapeError,
              "CUDA: " << t.ToString() << " does not broadcast to " << ToString(shape));
  kernels::View v;
  v.data = t.raw_data();
  v.dtype = static_cast<int>(t.dtype());
  v.rank = static_cast<int>(rank);
  const int64_t lead = rank - t.ndim();
  for (int64_t d = 0; d < rank; ++d) {
    v.shape[d] = shape[d];
    if (d < lead) continue;
    const int64_t n = t.shape()[d - lead];
    SINGA_CHECK(n == shape[d] || n == 1, ShapeError,
                "CUDA: " << t.ToString() << " does not broadcast to " << ToString(shape));
    v.strides[d] = n == 1 ? 0 : t.strides()[d - lead];
  }
  v.dense = t.is_contiguous() && t.shape() == shape;
  return v;
}

bool OnGpu(const Tensor& t) { return t.device().type == DeviceType::kCuda; }

cudaDataType_t BlasType(DType d) {
  switch (d) {
    case DType::kFloat32:
      return CUDA_R_32F;
    case DType::kFloat64:
      return CUDA_R_64F;
    case DType::kFloat16:
      return CUDA_R_16F;
    case DType::kBFloat16:
      return CUDA_R_16BF;
    default:
      throw DTypeError("cuBLAS: no matrix product for " + std::string(Name(d)));
  }
}

// One strided-batched product of row-major matrices:
// c[i] = alpha * op(a[i]) * op(b[i]) + beta * c[i], c[i] of shape [m, n].
void BatchedGemm(const Tensor& a, const Tensor& b, const Tensor& c, int64_t batch, int64_t m,
                 int64_t n, int64_t k, bool trans_a, bool trans_b, int64_t stride_a,
                 int64_t stride_b, float alpha, float beta) {
  Select(c.device().index);
  cublasHandle_t h = GpuOf(c.device().index).blas;
  const DType dt = c.dtype();
  const double alpha64 = alpha, beta64 = beta;
  const void* pa = dt == DType::kFloat64 ? static_cast<const void*>(&alpha64) : &alpha;
  const void* pb = dt == DType::kFloat64 ? static_cast<const void*>(&beta64) : &beta;
  const cublasComputeType_t compute =
      dt == DType::kFloat64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  // Column-major cuBLAS computes c^T = op(b)^T op(a)^T on the row-major buffers.
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ldb = static_cast<int>(trans_b ? k : n), lda = static_cast<int>(trans_a ? m : k);
  if (batch == 1) {  // a single product: cuBLAS picks its kernel for that
    CheckBlas(
        cublasGemmEx(h, op_b, op_a, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
                     pa, b.raw_data(), BlasType(dt), ldb, a.raw_data(), BlasType(dt), lda, pb,
                     c.raw_data(), BlasType(dt), static_cast<int>(n), compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
    return;
  }
  CheckBlas(cublasGemmStridedBatchedEx(h, op_b, op_a, static_cast<int>(n), static_cast<int>(m),
                                       static_cast<int>(k), pa, b.raw_data(), BlasType(dt), ldb,
                                       stride_b, a.raw_data(), BlasType(dt), lda, stride_a, pb,
                                       c.raw_data(), BlasType(dt), static_cast<int>(n), m * n,
                                       static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT),
            "cublasGemmStridedBatchedEx");
}

// A matrix operand as cuBLAS reads it: row-major, or the transpose of a
// row-major matrix (a Transpose view, read in place with the opposite
// `trans`); anything else is made dense.
struct Matrix {
  Tensor t;
  bool trans;
};
Matrix MatrixOf(const Tensor& t, bool trans) {
  if (t.ndim() == 2 && !t.is_contiguous() && t.strides()[0] == 1 && t.strides()[1] == t.dim(0))
    return {t, !trans};
  return {t.Contiguous(), trans};
}
// t, whose dimensions but the last two are 1, as a [rows, cols] matrix: a
// view (a transposed one too, which MatrixOf reads in place), not the copy
// that Reshape makes of a non-contiguous tensor.
Tensor AsMatrix(Tensor t, int64_t rows, int64_t cols) {
  while (t.ndim() > 2 && t.dim(0) == 1) t = t.Squeeze(0);
  return t.ndim() == 2 ? t : t.Reshape({rows, cols});
}

}  // namespace

int DeviceCount() {
  static const int n = [] {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return count;
  }();
  return n;
}

DeviceRuntime& Runtime(int index) { return GpuOf(index).runtime; }

namespace {
// The core reaches the GPUs through this (Device::Cuda, runtime, Sync).
const internal::GpuBackend kBackend{DeviceCount, Runtime, Sync};
[[maybe_unused]] const bool kRegistered = (internal::SetGpuBackend(&kBackend), true);
}  // namespace

void* Stream(int index) {
  Select(index);
  return GpuOf(index).stream;
}

void Sync(int index) {
  Gpu& g = GpuOf(index);
  Select(index);
  Check(cudaStreamSynchronize(g.stream), "cudaStreamSynchronize");
}

std::string DeviceName(int index) {
  cudaDeviceProp p{};
  Check(cudaGetDeviceProperties(&p, index), "cudaGetDeviceProperties");
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.totalGlobalMem >> 30) + " GiB)";
}

bool CopyDType(DType dtype) { return kernels::CopyDType(static_cast<int>(dtype)); }

namespace {
std::atomic<int64_t> g_host_copies{0};
}  // namespace

int64_t HostCopies() { return g_host_copies.load(std::memory_order_relaxed); }

void Copy(const Tensor& src, const Tensor& dst) {
  SINGA_CHECK(CopyDType(src.dtype()) && CopyDType(dst.dtype()), DTypeError,
              "CUDA: cannot copy " << src.ToString() << " to " << dst.ToString()
                                   << " (a GPU holds numeric and bool tensors)");
  if (dst.numel() == 0) return;
  if (OnGpu(src) && OnGpu(dst) && src.device() == dst.device()) {
    kernels::Copy(ViewOf(src, dst.shape()), ViewOf(dst, dst.shape()), StreamOf(dst));
    return;
  }
  if (!OnGpu(src)) {  // host to GPU: a dense host copy in dst's dtype, then one transfer
    Tensor h = src;
    if (!(src.is_contiguous() && src.dtype() == dst.dtype() && src.shape() == dst.shape())) {
      h = Tensor(dst.shape(), dst.dtype());
      h.CopyFrom(src);
    }
    Tensor d = dst.is_contiguous() ? dst : Tensor(dst.shape(), dst.dtype(), dst.device());
    cudaStream_t s = StreamOf(d);
    // A few bytes (a constant, a shape) travel in a kernel launch; more from
    // pageable memory wait for the stream's queued work before the copy.
    if (static_cast<int64_t>(d.nbytes()) <= kernels::kInlineBytes)
      kernels::CopyInline(h.raw_data(), static_cast<int64_t>(d.nbytes()), d.raw_data(), s);
    else
      Check(cudaMemcpyAsync(d.raw_data(), h.raw_data(), d.nbytes(), cudaMemcpyHostToDevice, s),
            "cudaMemcpyAsync (to the GPU)");
    if (!dst.is_contiguous()) Copy(d, dst);
    return;
  }
  // GPU to host (or to another GPU through the host): a dense GPU copy in
  // dst's dtype, one transfer, then the host's strided write.
  g_host_copies.fetch_add(1, std::memory_order_relaxed);
  Tensor d = src;
  if (!(src.is_contiguous() && src.dtype() == dst.dtype() && src.shape() == dst.shape())) {
    d = Tensor(dst.shape(), dst.dtype(), src.device());
    Copy(src, d);
  }
  Tensor h = OnGpu(dst) || !dst.is_contiguous() ? Tensor(dst.shape(), dst.dtype()) : dst;
  cudaStream_t s = StreamOf(d);
  Check(cudaMemcpyAsync(h.raw_data(), d.raw_data(), d.nbytes(), cudaMemcpyDeviceToHost, s),
        "cudaMemcpyAsync (to the host)");
  Check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  if (OnGpu(dst))
    Copy(h, dst);
  else if (h.block() != dst.block())
    Tensor(dst).CopyFrom(h);  // the host's strided write
}

void Fill(const Tensor& dst, double value) {
  kernels::Fill(ViewOf(dst, dst.shape()), value, StreamOf(dst));
}

void UnaryOp(Unary op, const Tensor& x, const Tensor& y, float alpha, float beta) {
  kernels::UnaryOp(op, ViewOf(x, y.shape()), ViewOf(y, y.shape()), alpha, beta, StreamOf(y));
}

void BinaryOp(Binary op, const Tensor& a, const Tensor& b, const Tensor& c) {
  kernels::BinaryOp(op, ViewOf(a, c.shape()), ViewOf(b, c.shape()), ViewOf(c, c.shape()),
                    StreamOf(c));
}

namespace {
// A bound of Clip as the kernels read it: one element of `dtype` on t's GPU.
Tensor Bound(const Tensor& b, const Tensor& t) {
  if (!b.defined()) return b;
  Tensor d = b.Reshape({}).Contiguous();
  if (d.dtype() == t.dtype() && d.device() == t.device()) return d;
  Tensor c({}, t.dtype(), t.device());
  Copy(d, c);
  return c;
}
const void* DataOf(const Tensor& t) { return t.defined() ? t.raw_data() : nullptr; }
}  // namespace

void Clip(const Tensor& x_in, const Tensor& lo, const Tensor& hi, const Tensor& y) {
  const Tensor x = x_in.Contiguous(), l = Bound(lo, x), h = Bound(hi, x);
  kernels::Clip(x.raw_data(), DataOf(l), DataOf(h), y.raw_data(), static_cast<int>(x.dtype()),
                y.numel(), StreamOf(y));
}

void ClipGrad(const Tensor& dy_in, const Tensor& x_in, const Tensor& lo, const Tensor& hi,
              const Tensor& dx) {
  const Tensor dy = dy_in.Contiguous(), x = x_in.Contiguous(), l = Bound(lo, x), h = Bound(hi, x);
  kernels::ClipGrad(dy.raw_data(), x.raw_data(), DataOf(l), DataOf(h), dx.raw_data(),
                    static_cast<int>(x.dtype()), dx.numel(), StreamOf(dx));
}

void Where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& c) {
  kernels::WhereOp(ViewOf(cond, c.shape()), ViewOf(a, c.shape()), ViewOf(b, c.shape()),
                   ViewOf(c, c.shape()), StreamOf(c));
}

void Softmax(const Tensor& x, const Tensor& y, int64_t axis, bool flatten, bool log) {
  const Shape& s = x.shape();
  const int64_t rank = x.ndim();
  if (axis < 0) axis += rank;
  auto prod = [&](int64_t lo, int64_t hi) {
    int64_t p = 1;
    for (int64_t d = lo; d < hi; ++d) p *= s[d];
    return p;
  };
  const int64_t outer = prod(0, axis);
  const int64_t n = flatten ? prod(axis, rank) : (rank ? s[axis] : 1);
  const int64_t inner = flatten ? 1 : prod(axis + 1, rank);
  const Tensor xc = x.Contiguous();
  kernels::Softmax(xc.raw_data(), y.raw_data(), static_cast<int>(x.dtype()), outer, n, inner, log,
                   StreamOf(y));
}

void Reduce(const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes, bool mean) {
  bool reduced[kernels::kMaxRank] = {};
  for (int64_t a : axes) reduced[a] = true;
  // y seen with x's rank: the reduced dimensions as 1.
  Shape kept = x.shape();
  for (int64_t a : axes) kept[a] = 1;
  const Tensor yk = y.Reshape(kept);
  kernels::ReduceSum(ViewOf(x, x.shape()), ViewOf(yk, kept), reduced, mean, StreamOf(y));
}

void MatMul(const Tensor& a, const Tensor& b, const Tensor& c) {
  // numpy's rules: a vector is a matrix of one row (a) or column (b).
  const Tensor a2 = a.ndim() == 1 ? a.Unsqueeze(0) : a;
  const Tensor b2 = b.ndim() == 1 ? b.Unsqueeze(1) : b;
  const int64_t m = a2.dim(-2), k = a2.dim(-1), n = b2.dim(-1);
  const Shape abatch(a2.shape().begin(), a2.shape().end() - 2);
  const Shape bbatch(b2.shape().begin(), b2.shape().end() - 2);
  const Shape batch = BroadcastShapes(abatch, bbatch, "MatMul");
  const int64_t count = NumElements(batch);
  if (c.numel() == 0) return;
  if (k == 0) {
    Fill(c, 0);
    return;
  }
  // An operand whose batch is one matrix is reused with stride 0; else it is
  // made dense over the whole batch.
  auto operand = [&](const Tensor& t, const Shape& tb, int64_t rows, int64_t cols,
                     int64_t& stride) {
    if (NumElements(tb) == 1) {
      stride = 0;
      return MatrixOf(AsMatrix(t, rows, cols), false);
    }
    Shape full = batch;
    full.push_back(rows);
    full.push_back(cols);
    stride = rows * cols;
    return Matrix{t.BroadcastTo(full).Contiguous(), false};
  };
  // One matrix b under a dense batch of a (a Linear layer over [batch, seq,
  // features]): one product of [count * m, k] rows instead of a batch with a
  // repeated operand, which cuBLAS runs with slower kernels.
  if (NumElements(bbatch) == 1 && a2.is_contiguous() && abatch == batch) {
    const Matrix bd = MatrixOf(AsMatrix(b2, k, n), false);
    BatchedGemm(a2, bd.t, c, 1, count * m, n, k, false, bd.trans, 0, 0, 1.0f, 0.0f);
    return;
  }
  int64_t sa = 0, sb = 0;
  const Matrix ad = operand(a2, abatch, m, k, sa);
  const Matrix bd = operand(b2, bbatch, k, n, sb);
  BatchedGemm(ad.t, bd.t, c, count, m, n, k, ad.trans, bd.trans, sa, sb, 1.0f, 0.0f);
}

void Gemm(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& y, bool trans_a,
          bool trans_b, float alpha, float beta) {
  const int64_t m = y.dim(0), n = y.dim(1);
  const int64_t k = trans_a ? a.dim(0) : a.dim(1);
  if (y.numel() == 0) return;
  const bool add_c = c.defined() && beta != 0;
  if (add_c) Copy(c, y);
  if (k == 0) {  // y = beta * c
    if (add_c)
      BinaryOp(Binary::kMul, y, Tensor::Full({}, beta, y.dtype(), y.device()), y);
    else
      Fill(y, 0);
    return;
  }
  const Matrix ma = MatrixOf(a, trans_a), mb = MatrixOf(b, trans_b);
  BatchedGemm(ma.t, mb.t, y, 1, m, n, k, ma.trans, mb.trans, 0, 0, alpha, add_c ? beta : 0.0f);
}

namespace {
// The product of t's dimensions [lo, hi).
int64_t Span(const Tensor& t, int64_t lo, int64_t hi) {
  int64_t p = 1;
  for (int64_t d = lo; d < hi; ++d) p *= t.dim(d);
  return p;
}
}  // namespace

void Gather(const Tensor& x_in, const Tensor& indices, const Tensor& y, int64_t axis) {
  const Tensor x = x_in.Contiguous(), idx = indices.Contiguous();
  kernels::Gather(x.raw_data(), static_cast<int>(SizeOf(x.dtype())), idx.raw_data(),
                  static_cast<int>(idx.dtype()), y.raw_data(), Span(x, 0, axis), x.dim(axis),
                  idx.numel(), Span(x, axis + 1, x.ndim()), StreamOf(y));
}

void OneHot(const Tensor& indices, const Tensor& values, const Tensor& y, int64_t axis) {
  const Tensor idx = indices.Contiguous(), v = values.Contiguous();
  kernels::OneHot(idx.raw_data(), static_cast<int>(idx.dtype()), v.raw_data(),
                  static_cast<int>(y.dtype()), y.raw_data(), Span(y, 0, axis), y.dim(axis),
                  Span(y, axis + 1, y.ndim()), StreamOf(y));
}

void NllLoss(const Tensor& log_prob, const Tensor& target, const Tensor& weight, const Tensor& loss,
             std::optional<int64_t> ignore, const std::string& reduction) {
  const Tensor lp = log_prob.Contiguous(), t = target.Contiguous();
  const Tensor w = weight.defined() ? weight.Contiguous() : Tensor();
  const int64_t n = lp.dim(0), c = lp.dim(1), d = Span(lp, 2, lp.ndim());
  const Tensor each(t.shape(), lp.dtype(), lp.device()), coef(t.shape(), lp.dtype(), lp.device());
  kernels::NllPick(lp.raw_data(), static_cast<int>(lp.dtype()), t.raw_data(),
                   static_cast<int>(t.dtype()), w.defined() ? w.raw_data() : nullptr,
                   ignore.has_value(), ignore.value_or(0), each.raw_data(), coef.raw_data(), n, c,
                   d, StreamOf(loss));
  if (reduction == "none") return Copy(each, loss);
  std::vector<int64_t> all(t.ndim());
  std::iota(all.begin(), all.end(), 0);
  Reduce(each, loss, all, false);
  if (reduction == "mean") {
    const Tensor total(loss.shape(), loss.dtype(), loss.device());
    Reduce(coef, total, all, false);
    BinaryOp(Binary::kDiv, loss, total, loss);
  }
}

void RowNormalize(const Tensor& x_in, const Tensor& y, const Tensor& mean, const Tensor& inv_std,
                  int64_t axis, float epsilon) {
  const Tensor x = x_in.Contiguous();
  kernels::RowNormalize(static_cast<const float*>(x.raw_data()), static_cast<float*>(y.raw_data()),
                        static_cast<float*>(mean.raw_data()),
                        static_cast<float*>(inv_std.raw_data()), Span(x, 0, axis),
                        Span(x, axis, x.ndim()), epsilon, StreamOf(y));
}

void SgdUpdate(int device, DType dtype, void* p, const void* g, void* buf, int64_t n, double lr,
               double wd, double momentum, double damp, bool first, bool nesterov) {
  Select(device);
  kernels::SgdUpdate(static_cast<int>(dtype), p, g, buf, n, lr, wd, momentum, damp, first, nesterov,
                     GpuOf(device).stream);
}

void AdamUpdate(int device, DType dtype, void* p, const void* g, void* m, void* v, int64_t n,
                double step, double root_bc2, double b1, double b2, double eps, double wd) {
  Select(device);
  kernels::AdamUpdate(static_cast<int>(dtype), p, g, m, v, n, step, root_bc2, b1, b2, eps, wd,
                      GpuOf(device).stream);
}

}  // namespace singa::cuda
