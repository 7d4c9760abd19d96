#include <nanobind/nanobind.h>

namespace nb = nanobind;

NB_MODULE(_singa, m) {}
