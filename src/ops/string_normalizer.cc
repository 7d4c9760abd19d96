// StringNormalizer: removes the elements of X ([C] or [1, C]) that are
// stopwords (compared case-insensitively unless is_case_sensitive), then
// lower- or upper-cases the rest (case_change_action LOWER/UPPER/NONE).
// An output that would be empty holds one empty string. Case mapping is
// Unicode's simple mapping (C.UTF-8's towlower/towupper on decoded UTF-8);
// `locale` is accepted and otherwise has no effect.
// https://onnx.ai/onnx/operators/onnx__StringNormalizer.html
//
// The output's length depends on the values, so shape inference filters X.
#include <locale.h>

#include <clocale>
#include <cwctype>
#include <set>

#include "ops/common.h"

namespace singa {
namespace {

struct NormalizerAttrs {
  std::string case_change_action = "NONE";
  int64_t is_case_sensitive = 0;
  std::string locale;
  std::vector<std::string> stopwords;
};

// Decodes UTF-8 (invalid bytes pass through as themselves).
std::u32string Decode(const std::string& s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    const int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len <= 1 || i + len > s.size()) {
      out.push_back(c);
      ++i;
      continue;
    }
    char32_t cp = c & (0xff >> (len + 1));
    for (int j = 1; j < len; ++j) cp = (cp << 6) | (static_cast<unsigned char>(s[i + j]) & 0x3f);
    out.push_back(cp);
    i += len;
  }
  return out;
}

std::string Encode(const std::u32string& s) {
  std::string out;
  for (char32_t cp : s) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }
  return out;
}

// A UTF-8 locale for the wide-character case functions (falls back to the
// C locale, which maps ASCII only).
locale_t Utf8Locale() {
  static const locale_t loc = [] {
    locale_t l = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
    return l ? l : newlocale(LC_CTYPE_MASK, "C", static_cast<locale_t>(0));
  }();
  return loc;
}

std::string ChangeCase(const std::string& s, bool upper) {
  std::u32string u = Decode(s);
  for (char32_t& cp : u)
    cp = static_cast<char32_t>(upper ? towupper_l(static_cast<wint_t>(cp), Utf8Locale())
                                     : towlower_l(static_cast<wint_t>(cp), Utf8Locale()));
  return Encode(u);
}

void CheckAttrs(const NormalizerAttrs& a, const std::string& where) {
  SINGA_CHECK(a.case_change_action == "NONE" || a.case_change_action == "LOWER" ||
                  a.case_change_action == "UPPER",
              ShapeError,
              where << ": case_change_action must be NONE, LOWER or UPPER, got '"
                    << a.case_change_action << "'");
}

std::vector<std::string> Normalize(const Tensor& x_in, const NormalizerAttrs& a) {
  const Tensor x = x_in.Contiguous();
  const std::string* p = x.data<std::string>();
  std::set<std::string> stops;
  for (const std::string& w : a.stopwords)
    stops.insert(a.is_case_sensitive ? w : ChangeCase(w, false));
  std::vector<std::string> out;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (!stops.empty() && stops.count(a.is_case_sensitive ? p[i] : ChangeCase(p[i], false)))
      continue;
    if (a.case_change_action == "NONE")
      out.push_back(p[i]);
    else
      out.push_back(ChangeCase(p[i], a.case_change_action == "UPPER"));
  }
  if (out.empty()) out.emplace_back();
  return out;
}

SpecList NormalizerInfer(const InferCtx& c, const NormalizerAttrs& a) {
  CheckAttrs(a, c.where());
  const Shape& x = c.shape(0);
  SINGA_CHECK(x.size() == 1 || (x.size() == 2 && x[0] == 1), ShapeError,
              c.where() << ": X must be [C] or [1, C], got " << c.inputs_string());
  const int64_t n = static_cast<int64_t>(Normalize(c.value(0), a).size());
  return {{DType::kString, x.size() == 1 ? Shape{n} : Shape{1, n}}};
}

void NormalizerForward(KernelCtx& k, const NormalizerAttrs& a) {
  const std::vector<std::string> out = Normalize(k.input(0), a);
  const Tensor& y = k.output(0);
  SINGA_CHECK(static_cast<int64_t>(out.size()) == y.numel(), ShapeError,
              "StringNormalizer: the input now keeps "
                  << out.size() << " strings, the output was sized for " << y.numel());
  std::copy(out.begin(), out.end(), y.data<std::string>());
}

}  // namespace

SINGA_REGISTER_OP(StringNormalizer, NormalizerAttrs)
    .since_opset(10)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("case_change_action", &NormalizerAttrs::case_change_action)
    .attr("is_case_sensitive", &NormalizerAttrs::is_case_sensitive)
    .attr("locale", &NormalizerAttrs::locale)
    .attr("stopwords", &NormalizerAttrs::stopwords)
    .dtypes({DType::kString}, {0})
    .infer(NormalizerInfer)
    .kernel(NormalizerForward);

}  // namespace singa
