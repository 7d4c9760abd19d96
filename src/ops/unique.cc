// Unique: the distinct elements of X (no axis: of X flattened) or distinct
// slices along `axis`, sorted ascending (sorted=1; slices compare
// lexicographically) or in order of first occurrence (sorted=0); with the
// index of each one's first occurrence, the inverse map (which output each
// input element/slice became) and the counts. The output size depends on the
// values, so shape inference runs the same grouping the kernel does.
// https://onnx.ai/onnx/operators/onnx__Unique.html
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "ops/movement.h"

namespace singa {
namespace {

struct UniqueAttrs {
  std::optional<int64_t> axis;
  bool sorted = true;
};

// The grouping: first occurrence of each output (in output order), the
// output each input slice maps to, and the counts.
struct Groups {
  std::vector<int64_t> first, inverse, counts;
};

// X seen as [outer, n, inner]: slice j is X[:, j, :].
struct Layout {
  int64_t outer = 1, n = 1, inner = 1;
};

Layout LayoutOf(const Shape& s, const std::optional<int64_t>& axis) {
  Layout l;
  if (!axis) {
    l.n = NumElements(s);
    return l;
  }
  const int64_t rank = static_cast<int64_t>(s.size());
  const int64_t ax = *axis < 0 ? *axis + rank : *axis;
  for (int64_t d = 0; d < ax; ++d) l.outer *= s[d];
  l.n = s[ax];
  for (int64_t d = ax + 1; d < rank; ++d) l.inner *= s[d];
  return l;
}

// NaN sorts after every number and NaNs are equal (numpy's unique, the
// oracle, does the same): a strict weak order even with NaNs.
template <class V>
bool Less(const V& x, const V& y) {
  if constexpr (std::is_floating_point_v<V>) {
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
  }
  return x < y;
}

template <class E>
Groups GroupSlices(const E* x, const Layout& l, bool sorted) {
  using V = std::conditional_t<std::is_same_v<E, std::string>, std::string, Acc<E>>;
  auto at = [&](int64_t j, int64_t e) -> V {
    return static_cast<V>(x[(e / l.inner) * l.n * l.inner + j * l.inner + e % l.inner]);
  };
  const int64_t len = l.outer * l.inner;
  // -1, 0, 1: lexicographic comparison of slices p and q.
  auto cmp = [&](int64_t p, int64_t q) {
    for (int64_t e = 0; e < len; ++e) {
      const V a = at(p, e), b = at(q, e);
      if (Less(a, b)) return -1;
      if (Less(b, a)) return 1;
    }
    return 0;
  };
  std::vector<int64_t> order(l.n);
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return cmp(p, q) < 0; });
  Groups g;
  std::vector<int64_t> group_of(l.n);
  for (int64_t s = 0; s < l.n; ++s) {
    if (s == 0 || cmp(order[s - 1], order[s]) != 0) {
      g.first.push_back(order[s]);  // the stable sort puts the first occurrence first
      g.counts.push_back(0);
    }
    group_of[order[s]] = static_cast<int64_t>(g.first.size()) - 1;
    ++g.counts.back();
  }
  if (!sorted) {  // renumber the groups by first occurrence
    std::vector<int64_t> by_first(g.first.size());
    std::iota(by_first.begin(), by_first.end(), int64_t{0});
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t a, int64_t b) { return g.first[a] < g.first[b]; });
    std::vector<int64_t> rank(by_first.size());
    Groups r;
    for (size_t i = 0; i < by_first.size(); ++i) {
      rank[by_first[i]] = static_cast<int64_t>(i);
      r.first.push_back(g.first[by_first[i]]);
      r.counts.push_back(g.counts[by_first[i]]);
    }
    for (int64_t& v : group_of) v = rank[v];
    g.first = std::move(r.first);
    g.counts = std::move(r.counts);
  }
  g.inverse = std::move(group_of);
  return g;
}

template <class F>
decltype(auto) VisitUnique(DType dt, F&& f) {
  if (dt == DType::kString) return f(Tag<std::string>{});
  return VisitDType(dt, std::forward<F>(f), "Unique");
}

Groups Compute(const Tensor& x, const UniqueAttrs& a) {
  const Tensor c = x.Contiguous();
  const Layout l = LayoutOf(x.shape(), a.axis);
  return VisitUnique(x.dtype(), [&]<class E>(Tag<E>) {
    return GroupSlices(static_cast<const E*>(c.raw_data()), l, a.sorted);
  });
}

SpecList Infer(const InferCtx& c, const UniqueAttrs& a) {
  Shape y = c.shape(0);
  if (a.axis) {
    const int64_t rank = c.rank(0);
    SINGA_CHECK(*a.axis >= -rank && *a.axis < rank, ShapeError,
                c.where() << ": axis " << *a.axis << " is out of range for rank " << rank << " ("
                          << c.inputs_string() << ")");
  }
  const Groups g = Compute(c.value(0), a);
  const int64_t u = static_cast<int64_t>(g.first.size());
  const int64_t n = static_cast<int64_t>(g.inverse.size());
  if (a.axis) {
    y[*a.axis < 0 ? *a.axis + c.rank(0) : *a.axis] = u;
  } else {
    y = {u};
  }
  return {{c.dtype(0), y}, {DType::kInt64, {u}}, {DType::kInt64, {n}}, {DType::kInt64, {u}}};
}

void Forward(KernelCtx& k, const UniqueAttrs& a) {
  const Tensor& x = k.input(0);
  const Groups g = Compute(x, a);
  const Layout l = LayoutOf(x.shape(), a.axis);
  const int64_t u = static_cast<int64_t>(g.first.size());
  // Y[:, i, :] = X[:, first[i], :].
  const Tensor src = x.Contiguous().Reshape({l.outer, l.n, l.inner});
  std::vector<int64_t> outer(l.outer), inner(l.inner);
  std::iota(outer.begin(), outer.end(), int64_t{0});
  std::iota(inner.begin(), inner.end(), int64_t{0});
  if (k.output(0).numel() > 0)
    ops::GatherAxes(src, k.output(0).Reshape({l.outer, u, l.inner}), {outer, g.first, inner},
                    "Unique");
  const std::vector<int64_t>* lists[] = {&g.first, &g.inverse, &g.counts};
  for (int i = 1; i < k.num_outputs(); ++i) {
    if (!k.output(i).defined()) continue;
    std::copy(lists[i - 1]->begin(), lists[i - 1]->end(), k.output(i).data<int64_t>());
  }
}

const std::vector<DType> kUnique11 = [] {
  std::vector<DType> v;
  for (DType d : dtypes::kAll)
    if (d != DType::kBFloat16) v.push_back(d);
  return v;
}();

}  // namespace

SINGA_REGISTER_OP(Unique, UniqueAttrs)
    .since_opset(11)
    .inputs({"X"})
    .outputs({"Y", "indices?", "inverse_indices?", "counts?"})
    .attr("axis", &UniqueAttrs::axis)
    .attr("sorted", &UniqueAttrs::sorted)
    .dtypes(kUnique11)
    .infer(Infer)
    .kernel(Forward);
// 28 added bfloat16.
SINGA_REGISTER_OP(Unique, UniqueAttrs)
    .since_opset(28)
    .inputs({"X"})
    .outputs({"Y", "indices?", "inverse_indices?", "counts?"})
    .attr("axis", &UniqueAttrs::axis)
    .attr("sorted", &UniqueAttrs::sorted)
    .dtypes(dtypes::kAll)
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
