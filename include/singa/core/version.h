// The version of this singa build ("0.1.0"): the project's version in
// CMakeLists.txt, which pyproject.toml repeats.
#pragma once

namespace singa {

const char* Version();

}  // namespace singa
