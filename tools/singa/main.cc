// singa: look at, run, time and check ONNX models from the shell.
//
//   singa info resnet18.onnx
//   singa run resnet18.onnx --input x.npy --output out.npz
//   singa bench resnet18.onnx --batch 1 8 --threads 2 --iterations 20
//   singa check resnet18.onnx                 # against onnxruntime, if installed
//
// Every failure is one line on stderr: exit 2 for bad input (arguments,
// files, models, shapes), 1 when a check fails, 0 otherwise.
#include <algorithm>
#include <cstring>
#include <iostream>

#include "cli.h"
#include "singa/core/version.h"
#include "singa/ops/tape.h"

namespace singa::cli {
namespace {

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      {"info",
       "IR and opset versions, inputs and outputs, parameter count, a FLOPs estimate, the op\n"
       "histogram and the nodes singa cannot import (with why).",
       "MODEL.onnx [options]",
       {kDimOption, kInputOption},
       "FLOPs: 2 per multiply-add of Conv, ConvTranspose, Gemm and MatMul nodes, measured by one\n"
       "run with generated inputs (symbolic dims 1 unless --dim; or the --input files); other\n"
       "ops and the nodes of subgraphs are not counted.\n",
       RunInfo},
      {"run",
       "Runs the model once and writes its outputs, by name, to an .npz (or one output to .npy).",
       "MODEL.onnx --input FILE [FILE ...] [--output out.npz] [options]",
       {kInputOption,
        {"--output", "FILE", false, "where the outputs go: .npz (by output name) or .npy"},
        {"--generate", "", false, "generate the inputs not given (see singa bench)"},
        kDimOption,
        kThreadsOption,
        kSeedOption},
       "Input files must match the model's declared dtypes and shapes (numpy writes float64\n"
       "by default: save float32 arrays for a float32 model).\n",
       RunRun},
      {"bench",
       "Times the model on generated inputs: latency percentiles, throughput and peak memory\n"
       "per batch size.",
       "MODEL.onnx [--batch N [N ...]] [--threads N] [--iterations K] [options]",
       {{"--batch", "N [N ...]", true, "batch sizes: the symbolic first dim of the inputs (1)"},
        kThreadsOption,
        {"--iterations", "K", false, "timed runs per batch size (20)"},
        {"--warmup", "K", false, "untimed runs before them (2)"},
        kDimOption,
        kSeedOption},
       "Generated inputs: floats uniform in [0, 1), integers 0, bools false. 'pool peak' is\n"
       "the most memory singa's allocator held during the timed runs (weights included);\n"
       "peak RSS is the process's.\n",
       RunBench},
      {"check",
       "Runs the model with singa and with onnxruntime on the same inputs and reports the\n"
       "largest differences per output; exits 1 when an element is outside the tolerance.",
       "MODEL.onnx [--input FILE ...] [--atol A] [--rtol R] [options]",
       {kInputOption,
        {"--atol", "A", false, "absolute tolerance (1e-4)"},
        {"--rtol", "R", false, "relative tolerance (1e-3)"},
        kDimOption,
        kThreadsOption,
        kSeedOption},
       "Inputs not given are generated (see singa bench). onnxruntime runs in Python:\n"
       "$SINGA_PYTHON, else the python beside this executable, else python3. Without\n"
       "onnxruntime the model runs in singa only and the check says so (exit 0).\n",
       RunCheck},
  };
  return commands;
}

std::string MainHelp() {
  std::string s =
      "usage: singa COMMAND MODEL.onnx [options]\n\n"
      "Look at, run, time and check ONNX models with singa.\n\ncommands:\n";
  for (const Command& c : Commands()) {
    std::string first = c.summary.substr(0, c.summary.find('\n'));
    s += "  " + c.name + std::string(8 - c.name.size(), ' ') + first + "\n";
  }
  s += "\n'singa COMMAND --help' describes a command's options.\n";
  return s;
}

}  // namespace
}  // namespace singa::cli

int main(int argc, char** argv) {
  using namespace singa::cli;
  if (argc < 2) {
    std::cerr << "singa: no command given (info, run, bench, check; see singa --help)\n";
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    std::cout << MainHelp();
    return 0;
  }
  if (name == "--version") {
    std::cout << "singa " << singa::Version() << "\n";
    return 0;
  }
  const Command* command = nullptr;
  for (const Command& c : Commands())
    if (c.name == name) command = &c;
  if (!command) {
    std::cerr << "singa: unknown command '" << name
              << "' (info, run, bench, check; see singa --help)\n";
    return 2;
  }
  const std::string prefix = "singa " + name + ": ";
  try {
    bool help = false;
    Args args = ParseArgs(*command, argc, argv, help);
    if (help) {
      std::cout << HelpText(*command);
      return 0;
    }
    singa::NoGradGuard inference;  // no tape, so runs replay sonnx's static plan
    return command->run(args);
  } catch (const UsageError& e) {
    std::cerr << prefix << OneLine(e.what()) << " (see singa " << name << " --help)\n";
  } catch (const singa::Error& e) {
    std::cerr << prefix << OneLine(e.what()) << "\n";
  } catch (const std::exception& e) {
    // Not one of singa's errors: a bug or the machine (memory), still one line.
    std::cerr << prefix << "internal error: " << OneLine(e.what()) << "\n";
    return 1;
  }
  return 2;
}
