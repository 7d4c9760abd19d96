// StringSplit: splits each string at `delimiter` (Python's str.split: with
// no or an empty delimiter, at runs of whitespace, ignoring leading and
// trailing whitespace), at most `maxsplit` times. Y holds the pieces, padded
// with empty strings to the largest count, [*X.shape, max count]; Z the
// counts (int64, X's shape).
// https://onnx.ai/onnx/operators/onnx__StringSplit.html
//
// Y's last dimension depends on the values, so shape inference splits X.
#include <optional>

#include "ops/common.h"

namespace singa {
namespace {

struct SplitAttrs {
  std::string delimiter;
  std::optional<int64_t> maxsplit;
};

bool IsSpace(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

std::vector<std::string> SplitOne(const std::string& s, const SplitAttrs& a) {
  const int64_t limit = a.maxsplit ? *a.maxsplit : -1;
  std::vector<std::string> out;
  if (!a.delimiter.empty()) {
    size_t pos = 0;
    while (limit < 0 || static_cast<int64_t>(out.size()) < limit) {
      const size_t next = s.find(a.delimiter, pos);
      if (next == std::string::npos) break;
      out.push_back(s.substr(pos, next - pos));
      pos = next + a.delimiter.size();
    }
    out.push_back(s.substr(pos));
    return out;
  }
  size_t i = 0;
  const size_t n = s.size();
  while (true) {
    while (i < n && IsSpace(s[i])) ++i;
    if (i == n) break;
    if (limit >= 0 && static_cast<int64_t>(out.size()) == limit) {
      out.push_back(s.substr(i));  // the rest, trailing whitespace kept
      break;
    }
    size_t j = i;
    while (j < n && !IsSpace(s[j])) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::vector<std::string>> SplitAll(const Tensor& x_in, const SplitAttrs& a) {
  const Tensor x = x_in.Contiguous();
  const std::string* p = x.data<std::string>();
  std::vector<std::vector<std::string>> parts(x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) parts[i] = SplitOne(p[i], a);
  return parts;
}

int64_t MaxCount(const std::vector<std::vector<std::string>>& parts) {
  size_t m = 0;
  for (const auto& v : parts) m = std::max(m, v.size());
  return static_cast<int64_t>(m);
}

SpecList SplitInfer(const InferCtx& c, const SplitAttrs& a) {
  SINGA_CHECK(!a.maxsplit || *a.maxsplit >= 0, ShapeError,
              c.where() << ": maxsplit must be >= 0, got " << *a.maxsplit);
  Shape y = c.shape(0);
  y.push_back(MaxCount(SplitAll(c.value(0), a)));
  return {{DType::kString, y}, {DType::kInt64, c.shape(0)}};
}

void SplitForward(KernelCtx& k, const SplitAttrs& a) {
  const auto parts = SplitAll(k.input(0), a);
  const int64_t width = MaxCount(parts);
  const Tensor& y = k.output(0);
  // The output was sized at inference; a replayed graph whose input now
  // splits differently cannot be served.
  SINGA_CHECK(y.shape().back() == width, ShapeError,
              "StringSplit: the input now splits into " << width << " pieces, the output was "
                                                        << "sized for " << y.shape().back());
  std::string* py = y.data<std::string>();
  for (size_t i = 0; i < parts.size(); ++i)
    for (size_t j = 0; j < parts[i].size(); ++j) py[i * width + j] = parts[i][j];
  if (k.num_outputs() > 1) {
    int64_t* pz = k.output(1).data<int64_t>();
    for (size_t i = 0; i < parts.size(); ++i) pz[i] = static_cast<int64_t>(parts[i].size());
  }
}

}  // namespace

SINGA_REGISTER_OP(StringSplit, SplitAttrs)
    .since_opset(20)
    .inputs({"X"})
    .outputs({"Y", "Z"})
    .attr("delimiter", &SplitAttrs::delimiter)
    .attr("maxsplit", &SplitAttrs::maxsplit)
    .dtypes({DType::kString}, {0})
    .infer(SplitInfer)
    .kernel(SplitForward);

}  // namespace singa
