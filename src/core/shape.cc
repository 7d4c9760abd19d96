#include "singa/core/shape.h"

#include <algorithm>

#include "singa/core/error.h"

namespace singa {

int64_t NumElements(const Shape& shape) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    SINGA_CHECK(!__builtin_mul_overflow(n, d, &n), ShapeError,
                "shape " << ToString(shape) << " has more elements than an int64 counts");
  return n;
}

Strides ContiguousStrides(const Shape& shape) {
  // Unsigned: the product of a shape with a 0 dim may pass any bound (its
  // strides address nothing); every other shape's was checked when its
  // tensor was sized (NumElements).
  Strides s(shape.size());
  uint64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = static_cast<int64_t>(acc);
    acc *= static_cast<uint64_t>(std::max<int64_t>(shape[i], 1));
  }
  return s;
}

std::string ToString(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

Shape BroadcastShapes(const Shape& a, const Shape& b, std::string_view op) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    SINGA_CHECK(da == db || da == 1 || db == 1, ShapeError,
                op << ": cannot broadcast shapes " << ToString(a) << " and " << ToString(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t NormalizeAxis(int64_t axis, int64_t rank, std::string_view op) {
  SINGA_CHECK(axis >= -rank && axis < std::max<int64_t>(rank, 1), ShapeError,
              op << ": axis " << axis << " is out of range for rank " << rank);
  return axis < 0 ? axis + rank : axis;
}

}  // namespace singa
