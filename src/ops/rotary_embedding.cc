// RotaryEmbedding (opset 23): rotates pairs of the first rotary_embedding_dim
// features of each head by position-dependent angles:
//   real = cos * x1 - sin * x2,   imag = sin * x1 + cos * x2
// with (x1, x2) the two halves of the rotated part, or its even and odd
// features when interleaved. X is (batch, heads, seq, head_size) or
// (batch, seq, heads * head_size) with num_heads. cos/sin are
// (max_position, rotary_dim / 2) indexed by position_ids (batch, seq), or
// (batch, seq, rotary_dim / 2) without position_ids.
// NOTE: each product and sum is rounded to X's dtype, as the spec's reference.
// Backward: the rotation is orthogonal, so dX is the same op on dY with -sin.
// https://onnx.ai/onnx/operators/onnx__RotaryEmbedding.html
#include "ops/common.h"
#include "ops/grad_util.h"

namespace singa {
namespace {

struct RotaryAttrs {
  int64_t interleaved = 0;
  int64_t num_heads = 0;
  int64_t rotary_embedding_dim = 0;
};

enum { kX, kCos, kSin, kPos };

struct Dims {
  int64_t b, s, h, d, rot;
  bool three_d;
};

Dims GetDims(const Shape& x, const RotaryAttrs& a) {
  Dims d{};
  d.three_d = x.size() == 3;
  d.b = x[0];
  if (d.three_d) {
    d.s = x[1], d.h = a.num_heads, d.d = a.num_heads ? x[2] / a.num_heads : 0;
  } else {
    d.h = x[1], d.s = x[2], d.d = x[3];
  }
  d.rot = a.rotary_embedding_dim ? a.rotary_embedding_dim : d.d;
  return d;
}

SpecList Infer(const InferCtx& c, const RotaryAttrs& a) {
  const Shape& x = c.shape(kX);
  SINGA_CHECK(x.size() == 3 || x.size() == 4, ShapeError,
              c.where() << ": X must be 3-D or 4-D (" << c.inputs_string() << ")");
  SINGA_CHECK(x.size() == 4 || (a.num_heads > 0 && x[2] % a.num_heads == 0), ShapeError,
              c.where() << ": a 3-D X needs num_heads dividing its last dimension (num_heads "
                        << a.num_heads << "; " << c.inputs_string() << ")");
  const Dims d = GetDims(x, a);
  SINGA_CHECK(d.rot >= 0 && d.rot <= d.d && d.rot % 2 == 0, ShapeError,
              c.where() << ": rotary_embedding_dim (" << d.rot
                        << ") must be even and at most the head size (" << d.d << ")");
  const Shape &cs = c.shape(kCos), &ss = c.shape(kSin);
  SINGA_CHECK(cs == ss, ShapeError,
              c.where() << ": cos_cache and sin_cache shapes differ (" << c.inputs_string() << ")");
  if (c.has_input(kPos)) {
    SINGA_CHECK(cs.size() == 2 && cs[1] == d.rot / 2 && c.shape(kPos) == (Shape{d.b, d.s}),
                ShapeError,
                c.where() << ": with position_ids (batch, seq), the caches must be "
                             "(max_position, rotary_dim / 2 = "
                          << d.rot / 2 << ") (" << c.inputs_string() << ")");
  } else {
    SINGA_CHECK(cs == (Shape{d.b, d.s, d.rot / 2}), ShapeError,
                c.where() << ": without position_ids, the caches must be (batch, seq, "
                             "rotary_dim / 2) = ("
                          << d.b << ", " << d.s << ", " << d.rot / 2 << ") (" << c.inputs_string()
                          << ")");
  }
  return {{c.dtype(kX), x}};
}

void Forward(KernelCtx& k, const RotaryAttrs& a) {
  const Tensor x = k.input(kX).Contiguous();
  const Dims d = GetDims(x.shape(), a);
  if (x.numel() == 0) return;
  std::vector<int64_t> pos;
  if (k.has_input(kPos)) pos = k.input(kPos).ToVector<int64_t>();
  const int64_t max_pos = k.has_input(kPos) ? k.input(kCos).shape()[0] : 0;
  for (int64_t p : pos)
    SINGA_CHECK(p >= 0 && p < max_pos, ShapeError,
                "RotaryEmbedding: position id " << p << " is out of range [0, " << max_pos << ")");
  VisitFloat(x.dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    auto r = [](A v) { return static_cast<A>(static_cast<T>(v)); };
    const Tensor cc = k.input(kCos).Contiguous(), sc = k.input(kSin).Contiguous();
    const T* pc = cc.numel() ? cc.data<T>() : nullptr;
    const T* ps = sc.numel() ? sc.data<T>() : nullptr;
    const T* px = x.data<T>();
    T* py = k.output(0).data<T>();
    const int64_t half = d.rot / 2;
    // Element (b, h, s, e) of X: 4-D (b, h, s, e) or 3-D (b, s, h * d + e).
    auto offset = [&](int64_t b, int64_t h, int64_t s) {
      return d.three_d ? ((b * d.s + s) * d.h + h) * d.d : ((b * d.h + h) * d.s + s) * d.d;
    };
    ParallelFor(0, d.b * d.s, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t bs = lo; bs < hi; ++bs) {
        const int64_t b = bs / d.s, s = bs % d.s;
        const int64_t row = pos.empty() ? bs : pos[bs];
        const T* cr = pc + row * half;
        const T* sr = ps + row * half;
        for (int64_t h = 0; h < d.h; ++h) {
          const T* xi = px + offset(b, h, s);
          T* yo = py + offset(b, h, s);
          for (int64_t i = 0; i < half; ++i) {
            const int64_t i1 = a.interleaved ? 2 * i : i, i2 = a.interleaved ? 2 * i + 1 : i + half;
            const A x1 = static_cast<A>(xi[i1]), x2 = static_cast<A>(xi[i2]);
            const A c = static_cast<A>(cr[i]), sn = static_cast<A>(sr[i]);
            yo[i1] = static_cast<T>(r(c * x1) - r(sn * x2));
            yo[i2] = static_cast<T>(r(sn * x1) + r(c * x2));
          }
          for (int64_t e = d.rot; e < d.d; ++e) yo[e] = xi[e];
        }
      }
    });
  });
}

TensorList Backward(const GradCtx& g, const RotaryAttrs& a) {
  const Tensor& dy = g.grad_output(0);
  if (!dy.defined() || !g.needs_grad(kX)) return {Tensor(), Tensor(), Tensor(), Tensor()};
  TensorList in = {dy, g.input(kCos), Call1("Neg", {g.input(kSin)})};
  if (g.has_input(kPos)) in.push_back(g.input(kPos));
  AttrMap attrs = {{"interleaved", a.interleaved},
                   {"num_heads", a.num_heads},
                   {"rotary_embedding_dim", a.rotary_embedding_dim}};
  return {Call1("RotaryEmbedding", in, attrs), Tensor(), Tensor(), Tensor()};
}

}  // namespace

SINGA_REGISTER_OP(RotaryEmbedding, RotaryAttrs)
    .since_opset(23)
    .inputs({"X", "cos_cache", "sin_cache", "position_ids?"})
    .outputs({"Y"})
    .attr("interleaved", &RotaryAttrs::interleaved)
    .attr("num_heads", &RotaryAttrs::num_heads)
    .attr("rotary_embedding_dim", &RotaryAttrs::rotary_embedding_dim)
    .dtypes(dtypes::kFloats, {kX, kCos, kSin})
    .dtypes({DType::kInt64}, {kPos})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

}  // namespace singa
