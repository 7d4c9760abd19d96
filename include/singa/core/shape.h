// Shape and strides: plain vectors of int64 (a 0-d scalar has an empty shape;
// a zero-sized dimension makes an empty tensor, which is legal everywhere).
//
//   Shape s = {2, 3, 4};
//   NumElements(s);                         // 24
//   ContiguousStrides(s);                   // {12, 4, 1}
//   BroadcastShapes({2, 1, 4}, {3, 1});     // {2, 3, 4}
//   NormalizeAxis(-1, 3, "Softmax");        // 2
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace singa {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;  // in elements, may be 0 (broadcast) or negative

// The element count; ShapeError when it does not fit in int64 (a shape read
// from a file or computed from data can promise more elements than exist).
int64_t NumElements(const Shape& shape);
// Row-major strides of a dense tensor of this shape.
Strides ContiguousStrides(const Shape& shape);
// "[2,3,4]"
std::string ToString(const Shape& shape);
// numpy/ONNX multidirectional broadcasting; `op` names the caller in the error.
Shape BroadcastShapes(const Shape& a, const Shape& b, std::string_view op = "broadcast");
// Maps axis in [-rank, rank) to [0, rank); throws ShapeError naming `op` otherwise.
int64_t NormalizeAxis(int64_t axis, int64_t rank, std::string_view op);

}  // namespace singa
