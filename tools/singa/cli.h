// The `singa` command line: one file per command (info.cc, run.cc, bench.cc,
// check.cc), the commands' options parsed by CLI11 (args.cc), the model inputs
// they share (inputs.cc), numpy files through singa's codec (singa/core/npy.h).
// main.cc dispatches and turns every error into one line on stderr: exit 2
// for bad input (arguments, files, models, shapes), 1 for a failed check, 0
// otherwise.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "singa/core/npy.h"
#include "singa/onnx/sonnx.h"

namespace singa::cli {

// A mistake in the command line (unknown flag, missing value, bad number).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The parsed command line: the command, its MODEL and its options' values
// by option name ("--batch"), as given (a flag's value is "1").
struct Args {
  std::string command;
  int (*run)(const Args&) = nullptr;
  std::string model;
  std::map<std::string, std::vector<std::string>> values;

  bool has(const std::string& name) const { return values.count(name) > 0; }
  const std::vector<std::string>& list(const std::string& name) const;
  std::string get(const std::string& name, const std::string& fallback) const;
  int64_t get_int(const std::string& name, int64_t fallback, int64_t min_value) const;
  double get_double(const std::string& name, double fallback) const;
  std::vector<int64_t> get_ints(const std::string& name, std::vector<int64_t> fallback,
                                int64_t min_value) const;
};

// What the command line asks for: `text` (--help, --version) to print, else
// `args` to run.
struct CommandLine {
  Args args;
  std::string text;
};
// Parses argv (CLI11, args.cc). A UsageError for a bad command line; `command`
// is set as soon as the command is known, for the error's prefix.
CommandLine ParseCommandLine(int argc, const char* const* argv, std::string& command);
int64_t ParseInt(const std::string& text, const std::string& what);

// The model's symbolic dims fixed by --dim NAME=N and, for the first dim of
// an input, by a batch size (0: not given).
struct DimValues {
  std::map<std::string, int64_t> named;
  int64_t batch = 0;
};
// --dim NAME=N for the symbolic dims of `inputs` (a UsageError names a NAME
// that none of them has).
DimValues ParseDims(const Args& args, const std::vector<sonnx::ValueInfo>& inputs);

// The concrete shape of a declared input: fixed dims as declared, a symbolic
// first dim from the batch, other symbolic dims from --dim (default 1).
Shape InputShape(const sonnx::ValueInfo& info, const DimValues& dims);

// Values for the model's inputs: from --input files (NAME=FILE, or FILE in
// input order; .npy or an .npz of named arrays), the others (when
// `fill_missing`) generated: floats uniform in [0, 1) from `seed`, integers
// 0 (a valid index into any non-empty axis), bools false.
TensorList ModelInputs(const sonnx::SingaRep& rep, const Args& args, const DimValues& dims,
                       bool fill_missing);
Tensor GeneratedInput(const sonnx::ValueInfo& info, const DimValues& dims);

// "x: float32[N,3,224,224]"
std::string Describe(const sonnx::ValueInfo& v);
// 11689512 -> "11,689,512"; bytes -> "44.6 MiB"; flops -> "3.64 G".
std::string Grouped(int64_t n);
std::string Bytes(double bytes);
std::string Scaled(double v);
// Error messages are printed on one line.
std::string OneLine(std::string s);

void ApplyThreads(const Args& args);

int RunInfo(const Args& args);
int RunRun(const Args& args);
int RunBench(const Args& args);
int RunCheck(const Args& args);

}  // namespace singa::cli
