// RegexFullMatch: whether each string matches `pattern` in full. The spec
// names re2's syntax; std::regex's ECMAScript grammar covers the common
// subset (classes \w \d \s, anchors, \b, groups, alternation, counted
// repetition) with the same meaning. Matching is on bytes.
// https://onnx.ai/onnx/operators/onnx__RegexFullMatch.html
#include <regex>

#include "ops/common.h"

namespace singa {
namespace {

struct RegexAttrs {
  std::string pattern;
};

std::regex Compile(const std::string& pattern, const std::string& where) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw ShapeError(where + ": invalid pattern '" + pattern + "': " + e.what());
  }
}

SpecList RegexInfer(const InferCtx& c, const RegexAttrs& a) {
  Compile(a.pattern, c.where());
  return {{DType::kBool, c.shape(0)}};
}

void RegexForward(KernelCtx& k, const RegexAttrs& a) {
  const std::regex re = Compile(a.pattern, "RegexFullMatch");
  cpu::Unary<std::string, bool>(k.input(0), k.output(0),
                                [&re](const std::string& s) { return std::regex_match(s, re); });
}

}  // namespace

SINGA_REGISTER_OP(RegexFullMatch, RegexAttrs)
    .since_opset(20)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("pattern", &RegexAttrs::pattern, true)
    .dtypes({DType::kString}, {0})
    .infer(RegexInfer)
    .kernel(RegexForward);

}  // namespace singa
