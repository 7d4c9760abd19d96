// Col2Im: the inverse of im2col. input [N, C * prod(block_shape), L] holds,
// for each of the L sliding blocks (row-major over the block grid), the
// block's values (channel-major, then row-major over block_shape); each is
// added back at its image position:
//   Y[n, c, l * s + t * d - pad_begin] += input[n, c * K + t, l]
// for Y [N, C, image_shape...], K = prod(block_shape). L must be the number
// of blocks: prod((image + pad_begin + pad_end - ((k - 1) * d + 1)) / s + 1).
// Backward: the gradient of a sum of gathered values is the gather (im2col)
// of dY: done with a plain loop, as the internal op Im2Col.
// https://onnx.ai/onnx/operators/onnx__Col2Im.html
#include "ops/common.h"

namespace singa {
namespace {

struct Col2ImAttrs {
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;
  std::vector<int64_t> strides;
};

struct Geometry {
  int64_t nd = 0, channels = 0, block_size = 1, blocks = 1, image_size = 1;
  std::vector<int64_t> image, kernel, stride, dilation, pad_begin, count;
};

Geometry Resolve(const std::string& where, const std::string& inputs, const Shape& in,
                 const std::vector<int64_t>& image, const std::vector<int64_t>& block,
                 const Col2ImAttrs& a) {
  Geometry g;
  g.nd = static_cast<int64_t>(image.size());
  const size_t nd = image.size();
  SINGA_CHECK(nd >= 1 && block.size() == nd, ShapeError,
              where << ": image_shape " << ToString(Shape(image)) << " and block_shape "
                    << ToString(Shape(block)) << " must have one length >= 1 (" << inputs << ")");
  SINGA_CHECK(in.size() == 3, ShapeError, where << ": input must be 3-D (" << inputs << ")");
  auto check_len = [&](const std::vector<int64_t>& v, size_t n, const char* name) {
    SINGA_CHECK(v.empty() || v.size() == n, ShapeError,
                where << ": attribute '" << name << "' has " << v.size() << " values, expected "
                      << n << " (" << inputs << ")");
  };
  check_len(a.dilations, nd, "dilations");
  check_len(a.strides, nd, "strides");
  check_len(a.pads, 2 * nd, "pads");
  for (size_t i = 0; i < nd; ++i) {
    const int64_t k = block[i], s = a.strides.empty() ? 1 : a.strides[i],
                  d = a.dilations.empty() ? 1 : a.dilations[i];
    const int64_t pb = a.pads.empty() ? 0 : a.pads[i], pe = a.pads.empty() ? 0 : a.pads[nd + i];
    SINGA_CHECK(k >= 1 && s >= 1 && d >= 1 && pb >= 0 && pe >= 0 && image[i] >= 0, ShapeError,
                where << ": block_shape, strides and dilations must be positive, pads and "
                      << "image_shape not negative (" << inputs << ")");
    const int64_t room = image[i] + pb + pe - ((k - 1) * d + 1);
    const int64_t count = room < 0 ? 0 : room / s + 1;
    g.image.push_back(image[i]);
    g.kernel.push_back(k);
    g.stride.push_back(s);
    g.dilation.push_back(d);
    g.pad_begin.push_back(pb);
    g.count.push_back(count);
    g.block_size *= k;
    g.blocks *= count;
    g.image_size *= image[i];
  }
  SINGA_CHECK(in[1] % g.block_size == 0, ShapeError,
              where << ": input's dim 1 (" << in[1] << ") is not a multiple of prod(block_shape) "
                    << g.block_size << " (" << inputs << ")");
  SINGA_CHECK(in[2] == g.blocks, ShapeError,
              where << ": input's dim 2 (" << in[2] << ") is not the number of blocks " << g.blocks
                    << " (" << inputs << ")");
  g.channels = in[1] / g.block_size;
  return g;
}

Geometry Resolve(const InferCtx& c, const Col2ImAttrs& a) {
  return Resolve(c.where(), c.inputs_string(), c.shape(0), ops::ReadInts(c, 1), ops::ReadInts(c, 2),
                 a);
}

SpecList Infer(const InferCtx& c, const Col2ImAttrs& a) {
  const Geometry g = Resolve(c, a);
  Shape y = {c.shape(0)[0], g.channels};
  y.insert(y.end(), g.image.begin(), g.image.end());
  return {{c.dtype(0), y}};
}

// Calls f(column offset within a channel's rows (t * L + l), image offset)
// for every block tap that lands inside the image.
template <class F>
void ForEachTap(const Geometry& g, F f) {
  const int64_t nd = g.nd;
  std::vector<int64_t> l_idx(nd), t_idx(nd);
  for (int64_t t = 0; t < g.block_size; ++t) {
    int64_t rest = t;
    for (int64_t i = nd - 1; i >= 0; --i) {
      t_idx[i] = rest % g.kernel[i];
      rest /= g.kernel[i];
    }
    for (int64_t l = 0; l < g.blocks; ++l) {
      rest = l;
      int64_t off = 0;
      bool inside = true;
      for (int64_t i = nd - 1, stride = 1; i >= 0; --i) {
        l_idx[i] = rest % g.count[i];
        rest /= g.count[i];
        const int64_t pos = l_idx[i] * g.stride[i] + t_idx[i] * g.dilation[i] - g.pad_begin[i];
        if (pos < 0 || pos >= g.image[i]) {
          inside = false;
          break;
        }
        off += pos * stride;
        stride *= g.image[i];
      }
      if (inside) f(t * g.blocks + l, off);
    }
  }
}

// Col2Im (scatter-add) or, with kGather, its adjoint Im2Col.
template <bool kGather>
void Run(const Tensor& src_in, const Tensor& dst, const Geometry& g) {
  const Tensor src = src_in.Contiguous();
  const int64_t planes = dst.dim(0) * g.channels;
  const int64_t col_plane = g.block_size * g.blocks;
  VisitFloat(dst.dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const T* ps = src.data<T>();
    T* pd = dst.data<T>();
    ParallelFor(0, planes, 1, [&](int64_t lo, int64_t hi) {
      std::vector<A> acc(kGather ? col_plane : g.image_size);
      for (int64_t p = lo; p < hi; ++p) {
        std::fill(acc.begin(), acc.end(), A(0));
        if constexpr (kGather) {
          const T* img = ps + p * g.image_size;
          ForEachTap(g, [&](int64_t col, int64_t off) { acc[col] = static_cast<A>(img[off]); });
          for (int64_t j = 0; j < col_plane; ++j) pd[p * col_plane + j] = static_cast<T>(acc[j]);
        } else {
          const T* col = ps + p * col_plane;
          ForEachTap(g, [&](int64_t c, int64_t off) { acc[off] += static_cast<A>(col[c]); });
          for (int64_t j = 0; j < g.image_size; ++j)
            pd[p * g.image_size + j] = static_cast<T>(acc[j]);
        }
      }
    });
  });
}

void Forward(KernelCtx& k, const Col2ImAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.empty()) return;
  const Geometry g = Resolve("Col2Im", "", k.input(0).shape(), k.input(1).ToVector<int64_t>(),
                             k.input(2).ToVector<int64_t>(), a);
  Run<false>(k.input(0), y, g);
}

// Im2Col (domain ai.singa): (dY, input, image_shape, block_shape) -> dinput;
// `input` gives only its shape.
SpecList Im2ColInfer(const InferCtx& c, const Col2ImAttrs&) { return {{c.dtype(0), c.shape(1)}}; }
void Im2ColForward(KernelCtx& k, const Col2ImAttrs& a) {
  const Tensor& dx = k.output(0);
  if (dx.empty()) return;
  const Geometry g = Resolve("Im2Col", "", dx.shape(), k.input(2).ToVector<int64_t>(),
                             k.input(3).ToVector<int64_t>(), a);
  Run<true>(k.input(0), dx, g);
}

TensorList Backward(const GradCtx& g, const Col2ImAttrs& a) {
  static const OpSchema& im2col = OpRegistry::Get("Im2Col", kLatestOpset, "ai.singa");
  const TensorList in = {g.grad_output(0), g.input(0), g.input(1), g.input(2)};
  TensorList d(g.num_inputs());
  d[0] = RunOp(im2col, in, a)[0];
  return d;
}

}  // namespace

SINGA_REGISTER_OP(Col2Im, Col2ImAttrs)
    .since_opset(18)
    .inputs({"input", "image_shape", "block_shape"})
    .outputs({"output"})
    .attr("dilations", &Col2ImAttrs::dilations)
    .attr("pads", &Col2ImAttrs::pads)
    .attr("strides", &Col2ImAttrs::strides)
    .dtypes(dtypes::kFloats, {0})
    .dtypes({DType::kInt64}, {1, 2})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

// The internal op of Col2Im's backward.
SINGA_REGISTER_OP(Im2Col, Col2ImAttrs)
    .domain("ai.singa")
    .inputs({"dY", "input", "image_shape", "block_shape"})
    .outputs({"dinput"})
    .attr("dilations", &Col2ImAttrs::dilations)
    .attr("pads", &Col2ImAttrs::pads)
    .attr("strides", &Col2ImAttrs::strides)
    .dtypes(dtypes::kFloats, {0, 1})
    .dtypes({DType::kInt64}, {2, 3})
    .infer(Im2ColInfer)
    .kernel(Im2ColForward);

}  // namespace singa
