// Einsum (opset 12; 28 adds bfloat16): Einstein summation over any number
// of operands. The equation names each operand's dimensions with letters
// (case-sensitive), optionally with one "..." standing for broadcast leading
// dimensions; a letter repeated within a term takes the diagonal; letters
// absent from the output are summed. Without "->" the output is the
// ellipsis dimensions, then the letters that occur once, in ASCII order.
// The kernel: one output element per iteration (in parallel), an odometer
// over the summed labels, each operand addressed through per-label strides
// (a repeated label sums its strides; a broadcast dimension has stride 0).
// NOTE: float sums accumulate in Acc<T> (float for the 16-bit floats, as
// the spec's reference for bfloat16); integers in their own type.
// https://onnx.ai/onnx/operators/onnx__Einsum.html
#include <algorithm>
#include <map>
#include <string>

#include "ops/common.h"

namespace singa {
namespace {

struct EinsumAttrs {
  std::string equation;
};

// Ellipsis dimensions get labels kEll + i (i-th of the widest ellipsis).
constexpr int kEll = 256;

struct Plan {
  std::vector<std::vector<int>> terms;  // labels of each operand's dimensions
  std::vector<int> out;                 // labels of the output's dimensions
  std::map<int, int64_t> size;          // label -> extent
};

Plan MakePlan(const InferCtx& c, const std::string& equation) {
  std::string eq;
  for (char ch : equation)
    if (ch != ' ') eq += ch;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  const bool explicit_out = arrow != std::string::npos;
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  SINGA_CHECK(static_cast<int>(terms.size()) == c.num_inputs(), ShapeError,
              c.where() << ": equation '" << equation << "' has " << terms.size() << " terms for "
                        << c.num_inputs() << " inputs");
  // Letters of one term, with -1 where its ellipsis stands.
  auto parse = [&](const std::string& t, bool allow_ellipsis) {
    std::vector<int> labels;
    bool seen_ellipsis = false;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t.compare(i, 3, "...") == 0) {
        SINGA_CHECK(allow_ellipsis && !seen_ellipsis, ShapeError,
                    c.where() << ": equation '" << equation << "' has a misplaced '...'");
        seen_ellipsis = true;
        labels.push_back(-1);
        i += 2;
        continue;
      }
      const char ch = t[i];
      SINGA_CHECK(
          std::isalpha(static_cast<unsigned char>(ch)), ShapeError,
          c.where() << ": equation '" << equation << "' has an invalid character '" << ch << "'");
      labels.push_back(ch);
    }
    return labels;
  };
  Plan p;
  int ell = 0;
  std::vector<std::vector<int>> raw(terms.size());
  std::vector<int> ell_rank(terms.size(), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    raw[i] = parse(terms[i], true);
    const bool has_ell = std::count(raw[i].begin(), raw[i].end(), -1) > 0;
    const int64_t letters = static_cast<int64_t>(raw[i].size()) - (has_ell ? 1 : 0);
    const int64_t rank = c.rank(static_cast<int>(i));
    SINGA_CHECK(has_ell ? rank >= letters : rank == letters, ShapeError,
                c.where() << ": term '" << terms[i] << "' of equation '" << equation
                          << "' does not match input " << i << " (" << c.inputs_string() << ")");
    ell_rank[i] = has_ell ? static_cast<int>(rank - letters) : 0;
    ell = std::max(ell, ell_rank[i]);
  }
  std::map<int, int> count;
  for (size_t i = 0; i < terms.size(); ++i) {
    std::vector<int>& labels = p.terms.emplace_back();
    for (int l : raw[i]) {
      if (l == -1) {
        for (int e = ell - ell_rank[i]; e < ell; ++e) labels.push_back(kEll + e);
      } else {
        labels.push_back(l);
        ++count[l];
      }
    }
    const Shape& s = c.shape(static_cast<int>(i));
    for (size_t d = 0; d < labels.size(); ++d) {
      const int l = labels[d];
      auto it = p.size.find(l);
      if (it == p.size.end() || it->second == 1) {
        SINGA_CHECK(it == p.size.end() || l >= kEll || s[d] == 1, ShapeError,
                    c.where() << ": label '" << static_cast<char>(l) << "' has sizes " << it->second
                              << " and " << s[d] << " (" << c.inputs_string() << ")");
        p.size[l] = s[d];
      } else {
        SINGA_CHECK(s[d] == it->second || (l >= kEll && s[d] == 1), ShapeError,
                    c.where() << ": dimension sizes " << it->second << " and " << s[d]
                              << " do not match for a label of equation '" << equation << "' ("
                              << c.inputs_string() << ")");
      }
    }
  }
  if (explicit_out) {
    for (int l : parse(eq.substr(arrow + 2), true)) {
      if (l == -1) {
        for (int e = 0; e < ell; ++e) p.out.push_back(kEll + e);
        continue;
      }
      SINGA_CHECK(count.count(l) && std::count(p.out.begin(), p.out.end(), l) == 0, ShapeError,
                  c.where() << ": output label '" << static_cast<char>(l) << "' of equation '"
                            << equation << "' is not an input label or is repeated");
      p.out.push_back(l);
    }
    for (int e = 0; e < ell; ++e)
      SINGA_CHECK(std::count(p.out.begin(), p.out.end(), kEll + e), ShapeError,
                  c.where() << ": equation '" << equation
                            << "' has '...' in its inputs but not in its output");
  } else {
    for (int e = 0; e < ell; ++e) p.out.push_back(kEll + e);
    for (auto& [l, n] : count)  // std::map: ASCII order
      if (n == 1) p.out.push_back(l);
  }
  return p;
}

SpecList Infer(const InferCtx& c, const EinsumAttrs& a) {
  const Plan p = MakePlan(c, a.equation);
  Shape out;
  for (int l : p.out) out.push_back(p.size.at(l));
  return {{c.dtype(0), out}};
}

template <class T>
void Run(KernelCtx& k, const Plan& p) {
  using A = Acc<T>;
  const int n = k.num_inputs();
  std::vector<Tensor> in;
  for (int i = 0; i < n; ++i) in.push_back(k.input(i).Contiguous());
  std::vector<int> reduce;
  for (auto& [l, s] : p.size)
    if (std::find(p.out.begin(), p.out.end(), l) == p.out.end()) reduce.push_back(l);
  // stride[i][label]: element step of operand i along the label.
  auto strides_of = [&](const std::vector<int>& labels) {
    std::vector<std::vector<int64_t>> st(n, std::vector<int64_t>(labels.size(), 0));
    for (int i = 0; i < n; ++i) {
      const Shape& s = in[i].shape();
      int64_t step = 1;
      for (int64_t d = static_cast<int64_t>(s.size()) - 1; d >= 0; --d) {
        const int l = p.terms[i][d];
        const auto pos = std::find(labels.begin(), labels.end(), l) - labels.begin();
        if (pos < static_cast<int64_t>(labels.size()) && s[d] != 1) st[i][pos] += step;
        step *= s[d];
      }
    }
    return st;
  };
  const auto out_stride = strides_of(p.out), red_stride = strides_of(reduce);
  std::vector<int64_t> out_size, red_size;
  for (int l : p.out) out_size.push_back(p.size.at(l));
  int64_t red_total = 1;
  for (int l : reduce) red_size.push_back(p.size.at(l)), red_total *= p.size.at(l);
  std::vector<const T*> ptr(n);
  for (int i = 0; i < n; ++i) ptr[i] = in[i].numel() ? in[i].data<T>() : nullptr;
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  T* py = y.data<T>();
  const int64_t nr = static_cast<int64_t>(reduce.size());
  ParallelFor(0, y.numel(),
              std::max<int64_t>(1, cpu::kElementwiseGrain / std::max<int64_t>(red_total * n, 1)),
              [&](int64_t lo, int64_t hi) {
                std::vector<int64_t> base(n), off(n), idx(nr);
                for (int64_t o = lo; o < hi; ++o) {
                  std::fill(base.begin(), base.end(), 0);
                  for (int64_t d = static_cast<int64_t>(out_size.size()) - 1, r = o; d >= 0; --d) {
                    const int64_t coord = r % out_size[d];
                    r /= out_size[d];
                    for (int i = 0; i < n; ++i) base[i] += coord * out_stride[i][d];
                  }
                  A sum = 0;
                  if (red_total > 0) {
                    std::fill(idx.begin(), idx.end(), 0);
                    off = base;
                    for (int64_t step = 0; step < red_total; ++step) {
                      A prod = static_cast<A>(ptr[0][off[0]]);
                      for (int i = 1; i < n; ++i) prod *= static_cast<A>(ptr[i][off[i]]);
                      sum += prod;
                      // Advance the odometer over the summed labels.
                      for (int64_t d = nr - 1; d >= 0; --d) {
                        for (int i = 0; i < n; ++i) off[i] += red_stride[i][d];
                        if (++idx[d] < red_size[d]) break;
                        for (int i = 0; i < n; ++i) off[i] -= red_stride[i][d] * red_size[d];
                        idx[d] = 0;
                      }
                    }
                  }
                  py[o] = static_cast<T>(sum);
                }
              });
}

void Forward(KernelCtx& k, const EinsumAttrs& a) {
  std::vector<Tensor> ins(k.inputs.begin(), k.inputs.end());
  const OpSchema& schema = *OpRegistry::Find("Einsum");
  const InferCtx c(schema, ins, 1, "");
  const Plan p = MakePlan(c, a.equation);
  VisitNumeric(k.input(0).dtype(), [&]<class T>(Tag<T>) { Run<T>(k, p); });
}

// ---- backward ----------------------------------------------------------------
// The gradient of operand i is itself an einsum: dY and the other operands
// (expanded to the labels' full sizes) contracted to operand i's labels,
// "out,term_j,...->term_i". Labels only operand i has are summed in the
// forward, so the gradient is constant along them: they are added back with
// Unsqueeze + Expand. Dimensions operand i broadcast (size 1) are summed back.
// A label repeated within operand i's term (a diagonal) gets the gradient on
// that diagonal and zeros elsewhere.
TensorList Backward(const GradCtx& g, const EinsumAttrs& a) {
  const int n = g.num_inputs();
  TensorList in;
  for (int i = 0; i < n; ++i) in.push_back(g.input(i));
  const InferCtx c(g.op(), in, 1, "");
  const Plan p = MakePlan(c, a.equation);
  // Letters for the ellipsis labels: ones the equation does not use.
  std::map<int, char> letter;
  std::string unused;
  for (char ch = 'a'; ch <= 'z'; ++ch)
    if (!p.size.count(ch)) unused += ch;
  for (char ch = 'A'; ch <= 'Z'; ++ch)
    if (!p.size.count(ch)) unused += ch;
  for (auto& [l, size] : p.size) {
    if (l < kEll) {
      letter[l] = static_cast<char>(l);
    } else {
      SINGA_CHECK(
          !unused.empty(), UnsupportedOp,
          "Einsum backward: no letters left for the '...' dimensions of '" << a.equation << "'");
      letter[l] = unused.back();
      unused.pop_back();
    }
  }
  auto term = [&](const std::vector<int>& labels) {
    std::string t;
    for (int l : labels) t += letter.at(l);
    return t;
  };
  auto ints = [](const std::vector<int64_t>& v) {
    return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
  };
  auto full = [&](const std::vector<int>& labels) {
    std::vector<int64_t> shape;
    for (int l : labels) shape.push_back(p.size.at(l));
    return shape;
  };
  const Tensor& dy = g.grad_output(0);
  TensorList grads(n);
  if (!dy.defined()) return grads;
  for (int i = 0; i < n; ++i) {
    if (!g.needs_grad(i)) continue;
    const std::vector<int>& ti = p.terms[i];
    // Operand i's labels once each (first occurrences, in order) and the
    // positions of repeats (a diagonal).
    std::vector<int> uniq;
    std::vector<int64_t> repeats;
    for (size_t x = 0; x < ti.size(); ++x) {
      if (std::count(uniq.begin(), uniq.end(), ti[x]))
        repeats.push_back(static_cast<int64_t>(x));
      else
        uniq.push_back(ti[x]);
    }
    std::vector<int> seen(p.out.begin(), p.out.end());
    std::string eq = term(p.out);
    TensorList ops_in = {dy};
    for (int j = 0; j < n; ++j) {
      if (j == i) continue;
      eq += "," + term(p.terms[j]);
      ops_in.push_back(Call1("Expand", {g.input(j), ints(full(p.terms[j]))}));
      seen.insert(seen.end(), p.terms[j].begin(), p.terms[j].end());
    }
    std::vector<int> keep;
    std::vector<int64_t> missing;
    for (size_t x = 0; x < uniq.size(); ++x) {
      if (std::count(seen.begin(), seen.end(), uniq[x]))
        keep.push_back(uniq[x]);
      else
        missing.push_back(static_cast<int64_t>(x));
    }
    // Opset 28's version takes bfloat16 too.
    Tensor r = Call1("Einsum", ops_in, {{"equation", eq + "->" + term(keep)}}, 28);
    if (!missing.empty()) {
      r = Call1("Unsqueeze", {r, ints(missing)});
      r = Call1("Expand", {r, ints(full(uniq))});
    }
    if (!repeats.empty()) {
      // Spread onto the diagonal: 1 where every repeat equals its first occurrence.
      r = Call1("Expand", {Call1("Unsqueeze", {r, ints(repeats)}), ints(full(ti))});
      const std::vector<int64_t> shape = full(ti);
      int64_t count = 1;
      for (int64_t v : shape) count *= v;
      std::vector<double> mask(count);
      std::vector<int64_t> idx(shape.size(), 0);
      for (int64_t e = 0; e < count; ++e) {
        bool on = true;
        for (size_t x = 0; x < ti.size() && on; ++x)
          for (size_t z = 0; z < x && on; ++z)
            if (ti[z] == ti[x]) on = idx[z] == idx[x];
        mask[e] = on ? 1.0 : 0.0;
        for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0 && ++idx[d] == shape[d];
             --d)
          idx[d] = 0;
      }
      r = Call1("Mul", {r, Tensor::FromVector<double>(shape, mask, r.device()).AsType(r.dtype())});
    }
    grads[i] = ops::SumToShape(r, g.input(i).shape());
  }
  return grads;
}

}  // namespace

SINGA_REGISTER_OP(Einsum, EinsumAttrs)
    .since_opset(12)
    .inputs({"Inputs..."})
    .outputs({"Output"})
    .attr("equation", &EinsumAttrs::equation, true)
    .dtypes([] {
      std::vector<DType> v;
      for (DType dt : dtypes::kNumeric)
        if (dt != DType::kBFloat16) v.push_back(dt);
      return v;
    }())
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);
SINGA_REGISTER_OP(Einsum, EinsumAttrs)
    .since_opset(28)
    .inputs({"Inputs..."})
    .outputs({"Output"})
    .attr("equation", &EinsumAttrs::equation, true)
    .dtypes(dtypes::kNumeric)
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

}  // namespace singa
