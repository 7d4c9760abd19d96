// TfIdfVectorizer: counts, in each row of X ([C] or [B, C], int32/int64 or
// string), the n-grams of the pool (pool_int64s or pool_strings; ngram_counts
// gives where the 1-grams, 2-grams, ... start in it) whose length lies in
// [min_gram_length, max_gram_length]; an n-gram's items may be up to
// max_skip_count items apart (the same gap between each pair). Each distinct
// position is counted once: 1-grams have no gap, so only gap 0 counts them.
// The count of the i-th pool n-gram goes to column ngram_indexes[i] of Y
// ([output_size] or [B, output_size], float32, output_size = max(ngram_indexes)
// + 1), then mode weighs it: TF the count, IDF the weight if the count is
// positive (else 0; 1 without weights), TFIDF weight * count.
// NOTE: weights[i] is the weight of the i-th pool n-gram, as the spec says and
// onnxruntime does; onnx's reference indexes weights by output column instead
// (the same where ngram_indexes is 0, 1, 2, ...).
// https://onnx.ai/onnx/operators/onnx__TfIdfVectorizer.html
#include <map>
#include <unordered_map>

#include "ops/common.h"

namespace singa {
namespace {

struct TfIdfAttrs {
  int64_t max_gram_length = 0;
  int64_t max_skip_count = 0;
  int64_t min_gram_length = 0;
  std::string mode;
  std::vector<int64_t> ngram_counts;
  std::vector<int64_t> ngram_indexes;
  std::optional<std::vector<int64_t>> pool_int64s;
  std::optional<std::vector<std::string>> pool_strings;
  std::vector<float> weights;
};

// The pool as token ids (each distinct pool item one id) and the n-grams of
// counted lengths as sequences of ids, each mapped to its output column.
struct Pool {
  std::map<std::vector<int64_t>, int64_t> grams;
  int64_t output_size = 0;
};

void CheckAttrs(const TfIdfAttrs& a, const std::string& where) {
  SINGA_CHECK(a.mode == "TF" || a.mode == "IDF" || a.mode == "TFIDF", ShapeError,
              where << ": mode must be TF, IDF or TFIDF, got '" << a.mode << "'");
  SINGA_CHECK(a.pool_int64s.has_value() != a.pool_strings.has_value(), ShapeError,
              where << ": exactly one of pool_int64s and pool_strings must be set");
  SINGA_CHECK(a.min_gram_length >= 1 && a.min_gram_length <= a.max_gram_length, ShapeError,
              where << ": need 1 <= min_gram_length <= max_gram_length, got " << a.min_gram_length
                    << " and " << a.max_gram_length);
  SINGA_CHECK(a.max_skip_count >= 0, ShapeError,
              where << ": max_skip_count must not be negative, got " << a.max_skip_count);
  const int64_t items = a.pool_int64s ? std::ssize(*a.pool_int64s) : std::ssize(*a.pool_strings);
  int64_t prev = 0;
  for (int64_t s : a.ngram_counts) {
    SINGA_CHECK(s >= prev && s <= items, ShapeError,
                where << ": ngram_counts must be ascending start positions in the pool of " << items
                      << " items, got " << ToString(Shape(a.ngram_counts)));
    prev = s;
  }
  int64_t grams = 0;
  for (size_t i = 0; i < a.ngram_counts.size(); ++i) {
    const int64_t end = i + 1 < a.ngram_counts.size() ? a.ngram_counts[i + 1] : items;
    const int64_t n = static_cast<int64_t>(i) + 1;
    SINGA_CHECK((end - a.ngram_counts[i]) % n == 0, ShapeError,
                where << ": the " << n << "-grams of the pool take " << end - a.ngram_counts[i]
                      << " items, not a multiple of " << n);
    grams += (end - a.ngram_counts[i]) / n;
  }
  SINGA_CHECK(std::ssize(a.ngram_indexes) == grams, ShapeError,
              where << ": ngram_indexes has " << a.ngram_indexes.size() << " entries for the "
                    << grams << " n-grams of the pool");
  for (int64_t c : a.ngram_indexes)
    SINGA_CHECK(c >= 0, ShapeError, where << ": ngram_indexes has a negative column " << c);
  SINGA_CHECK(a.weights.empty() || a.weights.size() == a.ngram_indexes.size(), ShapeError,
              where << ": weights has " << a.weights.size() << " entries for the " << grams
                    << " n-grams of the pool");
}

// Builds the pool over token ids; `token` gives the id of pool item i.
template <class Token>
Pool BuildPool(const TfIdfAttrs& a, Token token) {
  Pool p;
  const int64_t items = a.pool_int64s ? std::ssize(*a.pool_int64s) : std::ssize(*a.pool_strings);
  int64_t id = 0;
  for (size_t i = 0; i < a.ngram_counts.size(); ++i) {
    const int64_t n = static_cast<int64_t>(i) + 1;
    const int64_t end = i + 1 < a.ngram_counts.size() ? a.ngram_counts[i + 1] : items;
    for (int64_t s = a.ngram_counts[i]; s + n <= end; s += n, ++id) {
      if (n < a.min_gram_length || n > a.max_gram_length) continue;
      std::vector<int64_t> gram(n);
      for (int64_t j = 0; j < n; ++j) gram[j] = token(s + j);
      p.grams[gram] = a.ngram_indexes[id];  // a repeated n-gram counts in its last column
    }
  }
  for (int64_t c : a.ngram_indexes) p.output_size = std::max(p.output_size, c + 1);
  return p;
}

SpecList Infer(const InferCtx& c, const TfIdfAttrs& a) {
  CheckAttrs(a, c.where());
  const Shape& x = c.shape(0);
  SINGA_CHECK(x.size() == 1 || x.size() == 2, ShapeError,
              c.where() << ": X must be [C] or [B, C], got " << c.inputs_string());
  SINGA_CHECK((c.dtype(0) == DType::kString) == a.pool_strings.has_value(), DTypeError,
              c.where() << ": " << (a.pool_strings ? "pool_strings needs" : "pool_int64s needs")
                        << (a.pool_strings ? " a string X" : " an integer X") << ", got "
                        << c.inputs_string());
  int64_t size = 0;
  for (int64_t col : a.ngram_indexes) size = std::max(size, col + 1);
  return {{DType::kFloat32, x.size() == 1 ? Shape{size} : Shape{x[0], size}}};
}

// X's elements are In, looked up among pool items of type K (int32 input
// compares with the int64 pool by value).
template <class In, class K>
void Count(KernelCtx& k, const TfIdfAttrs& a, const std::vector<K>& pool_items) {
  std::unordered_map<K, int64_t> tokens;
  for (const K& item : pool_items) tokens.emplace(item, std::ssize(tokens));
  const Pool pool = BuildPool(a, [&](int64_t i) { return tokens.at(pool_items[i]); });
  const Tensor x = k.input(0).Contiguous();
  const Tensor& y = k.output(0);
  const int64_t rows = x.ndim() == 2 ? x.shape()[0] : 1, cols = x.shape().back();
  const int64_t size = pool.output_size;
  float* out = y.data<float>();
  std::fill(out, out + y.numel(), 0.0f);
  const In* in = x.data<In>();
  std::vector<int64_t> ids(cols), gram;
  std::vector<int64_t> counts(size);
  // A column's weight is its n-gram's (the last one's if several share it).
  std::vector<float> weight(size, 1.0f);
  if (!a.weights.empty())
    for (size_t i = 0; i < a.ngram_indexes.size(); ++i) weight[a.ngram_indexes[i]] = a.weights[i];
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) {
      auto it = tokens.find(static_cast<K>(in[r * cols + j]));
      ids[j] = it == tokens.end() ? -1 : it->second;
    }
    std::fill(counts.begin(), counts.end(), 0);
    for (int64_t gap = 1; gap <= a.max_skip_count + 1; ++gap) {
      // 1-grams have no gap: only the first pass counts them.
      const int64_t first = gap == 1 ? a.min_gram_length : std::max<int64_t>(a.min_gram_length, 2);
      if (first > a.max_gram_length) break;
      for (int64_t s = 0; s < cols; ++s) {
        gram.clear();
        for (int64_t n = 1; n <= a.max_gram_length; ++n) {
          const int64_t at = s + (n - 1) * gap;
          if (at >= cols || ids[at] < 0) break;
          gram.push_back(ids[at]);
          if (n < first) continue;
          auto hit = pool.grams.find(gram);
          if (hit != pool.grams.end()) ++counts[hit->second];
        }
      }
    }
    float* row = out + r * size;
    for (int64_t col = 0; col < size; ++col) {
      if (a.mode == "TF")
        row[col] = static_cast<float>(counts[col]);
      else if (a.mode == "IDF")
        row[col] = counts[col] > 0 ? weight[col] : 0.0f;
      else
        row[col] = weight[col] * static_cast<float>(counts[col]);
    }
  }
}

void Forward(KernelCtx& k, const TfIdfAttrs& a) {
  switch (k.input(0).dtype()) {
    case DType::kString:
      return Count<std::string>(k, a, *a.pool_strings);
    case DType::kInt64:
      return Count<int64_t>(k, a, *a.pool_int64s);
    case DType::kInt32:
      return Count<int32_t>(k, a, *a.pool_int64s);
    default:
      throw DTypeError("TfIdfVectorizer: no kernel for dtype " +
                       std::string(Name(k.input(0).dtype())));
  }
}

}  // namespace

SINGA_REGISTER_OP(TfIdfVectorizer, TfIdfAttrs)
    .since_opset(9)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("max_gram_length", &TfIdfAttrs::max_gram_length, true)
    .attr("max_skip_count", &TfIdfAttrs::max_skip_count, true)
    .attr("min_gram_length", &TfIdfAttrs::min_gram_length, true)
    .attr("mode", &TfIdfAttrs::mode, true)
    .attr("ngram_counts", &TfIdfAttrs::ngram_counts, true)
    .attr("ngram_indexes", &TfIdfAttrs::ngram_indexes, true)
    .attr("pool_int64s", &TfIdfAttrs::pool_int64s)
    .attr("pool_strings", &TfIdfAttrs::pool_strings)
    .attr("weights", &TfIdfAttrs::weights)
    .dtypes({DType::kString, DType::kInt32, DType::kInt64}, {0})
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
