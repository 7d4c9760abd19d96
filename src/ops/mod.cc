// Mod: elementwise remainder with numpy broadcasting. fmod=0 follows
// Python's % (the result takes the divisor's sign); fmod=1 follows C's fmod
// (the dividend's sign). Integer modulo by zero is an error; for floats it
// gives NaN.
// https://onnx.ai/onnx/operators/onnx__Mod.html
#include <cmath>

#include "ops/common.h"

namespace singa {
namespace {

struct ModAttrs {
  bool fmod = false;
};

template <class V>
V CMod(V a, V b) {
  // x % -1 is 0; computing it traps for the most negative x.
  if constexpr (std::is_signed_v<V> && std::is_integral_v<V>)
    return b == V(-1) ? V(0) : V(a % b);
  else if constexpr (std::is_integral_v<V>)
    return static_cast<V>(a % b);
  else
    return std::fmod(a, b);
}

template <class V>
V PyMod(V a, V b) {
  V r = CMod(a, b);
  if constexpr (std::is_unsigned_v<V>) {
    return r;
  } else {
    // Move a nonzero remainder whose sign differs from the divisor's over.
    if (r != V(0) && ((r < V(0)) != (b < V(0)))) r += b;
    return r;
  }
}

void ModForward(KernelCtx& k, const ModAttrs& a) {
  const Tensor& b = k.input(1);
  VisitNumeric(b.dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    if constexpr (std::is_integral_v<T>) {
      for (T v : b.ToVector<T>())
        SINGA_CHECK(v != T(0), ShapeError,
                    "Mod: integer modulo by zero (B: " << b.ToString() << ")");
    }
    if (a.fmod)
      cpu::Binary<T, T, T>(k.input(0), b, k.output(0),
                           [](T x, T y) { return static_cast<T>(CMod<A>(x, y)); });
    else
      cpu::Binary<T, T, T>(k.input(0), b, k.output(0),
                           [](T x, T y) { return static_cast<T>(PyMod<A>(x, y)); });
  });
}

SpecList Infer(const InferCtx& c, const ModAttrs&) { return ops::BroadcastSpec(c); }

}  // namespace

// Version 13 only added bfloat16.
SINGA_REGISTER_OP(Mod, ModAttrs)
    .since_opset(10)
    .inputs({"A", "B"})
    .outputs({"C"})
    .attr("fmod", &ModAttrs::fmod)
    .dtypes(dtypes::kNumeric, {0, 1})
    .infer(Infer)
    .kernel(ModForward);

}  // namespace singa
