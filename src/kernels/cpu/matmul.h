// Matrix products shared by MatMul and Gemm:
//   y = alpha * (a @ b) + beta * c
// over batches, with a (..., M, K), b (..., K, N) and y (..., M, N) dense, all
// of one rank, and the batch dimensions of a and b either y's or 1
// (broadcast). a and b may have any strides.
//
//   cpu::MatMulLoops(a, b, y);                    // any dtype MatMul allows
//   if (!cpu::DnnlMatMul(a, b, y)) cpu::MatMulLoops(a, b, y);
#pragma once

#include "singa/core/tensor.h"

namespace singa::cpu {

// oneDNN's matmul (f32, f16, bf16): y = alpha * (a @ b) + beta * y, so the
// caller pre-fills y with a broadcast c when beta != 0. A f32 matrix product
// of more than 2^24 multiply-adds runs oneDNN's sgemm. Returns false, having
// written nothing, where oneDNN has no optimized kernel for these
// dtypes/strides (the caller then runs MatMulLoops). Inputs described by
// their strides when oneDNN accepts them, else copied dense.
bool DnnlMatMul(const Tensor& a, const Tensor& b, const Tensor& y, float alpha = 1.0f,
                float beta = 0.0f);

// y = a @ w^T + bias for a [M, K], w [N, K] (any strides: Gemm's B with
// transB, else B transposed) and bias [N] (or undefined), all of y's dtype
// (f32, f16, bf16): oneDNN's inner product, with w packed into the layout it
// wants once per weight block and version (dnnl_util::PackedWeights), where
// the matmul primitive would re-read a transposed B on every call. For
// products up to 2^24 multiply-adds (above them DnnlMatMul's sgemm is
// faster). Returns false, having written nothing, where it does not apply.
bool DnnlLinear(const Tensor& a, const Tensor& w, const Tensor& bias, const Tensor& y);

// w [N, K] (float32, any strides: Gemm's B with transB, else B transposed;
// a recurrent op's weight rows) packed for PanelMatMul: w^T cut into panels
// of kPanel columns, each [K, kPanel] dense, the last one padded with zeros.
// Kept per weight block, view and version as DnnlLinear's packed weights
// are; valid until w's next version or the next call for w.
const float* PanelWeights(const Tensor& w);

// y [M, N] = a [M, K] @ w^T (+ bias [N] when not null), dense float32, with
// w packed by PanelWeights: register-blocked loops (up to 4 rows of a by
// one panel, in vectors the compiler keeps in registers), the panels split
// over the threads, so each thread reads the same part of the weights on
// every call. For products a oneDNN call costs more than (PanelMatMulFits).
void PanelMatMul(const float* a, const float* panels, const float* bias, float* y, int64_t m,
                 int64_t k, int64_t n);

// Whether PanelMatMul is as fast as oneDNN for [m, k] @ [k, n]: products of
// a few rows (a batch-1 Gemm's, which reads the weights once whatever kernel
// runs it), and products of up to 128 rows and 2^22 multiply-adds (a
// recurrent step's, an LSTM's input projection over a text line): on 2
// threads, from 32x128x256 to 16x512x500, as fast as oneDNN's inner product
// or faster, with no primitive generated per shape (0.1 ms, at each new
// sequence length). More rows by few columns run on one thread (one panel):
// 8400x16 @ 16x1 took 129 us against oneDNN's 23.
inline bool PanelMatMulFits(int64_t m, int64_t k, int64_t n) {
  return m <= 4 || (m <= 128 && m * n * k <= (int64_t{1} << 22));
}

// The plain-loop kernel for every MatMul/Gemm dtype: accumulates in Acc<T>
// (in T for integers, which wrap as numpy's do). c, when defined,
// broadcasts to y's shape. Integer results with alpha/beta are computed in
// double and truncated, as numpy casts them.
void MatMulLoops(const Tensor& a, const Tensor& b, const Tensor& y, double alpha = 1.0,
                 double beta = 0.0, const Tensor& c = Tensor());

}  // namespace singa::cpu
