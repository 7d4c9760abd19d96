// Errors: every failure caused by user input is a singa::Error subclass whose
// message names what is wrong (op, node, shapes, dtypes, file). The Python
// binding maps them to ValueError / NotImplementedError / OSError subclasses.
//
//   throw ShapeError("Add: cannot broadcast shapes [2,3] and [4]");
//   SINGA_CHECK(axis < rank, ShapeError, "Concat: axis " << axis << " out of range");
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace singa {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The model file or graph is malformed (cycle, missing initializer, ...).
class InvalidModel : public Error {
 public:
  using Error::Error;
};
// An op, domain, opset version or attribute value we do not implement.
class UnsupportedOp : public Error {
 public:
  using Error::Error;
};
// Shapes that do not fit an op, or an invalid attribute or argument value.
class ShapeError : public Error {
 public:
  using Error::Error;
};
// A dtype an op does not accept, or mismatched dtypes.
class DTypeError : public Error {
 public:
  using Error::Error;
};
// A file that cannot be read or written.
class IOError : public Error {
 public:
  using Error::Error;
};
// A tensor larger than the memory limit (MaxTensorBytes), refused before
// anything is allocated.
class MemoryError : public Error {
 public:
  using Error::Error;
};

// Names from files (models, states) are bytes: messages show them through
// Printable, which writes bytes that are not UTF-8 as \xNN, so a message
// always reaches Python as text. IsUtf8 checks a name before it is kept.
bool IsUtf8(std::string_view s);
std::string Printable(std::string_view s);

}  // namespace singa

// Throws ErrorType with a message built by streaming `msg` when `cond` fails.
#define SINGA_CHECK(cond, ErrorType, msg)    \
  do {                                       \
    if (!(cond)) {                           \
      std::ostringstream singa_check_os;     \
      singa_check_os << msg;                 \
      throw ErrorType(singa_check_os.str()); \
    }                                        \
  } while (0)
