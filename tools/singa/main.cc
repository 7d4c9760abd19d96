// singa: look at, run, time and check ONNX models from the shell.
//
//   singa info resnet18.onnx
//   singa run resnet18.onnx --input x.npy --output out.npz
//   singa bench resnet18.onnx --batch 1 8 --threads 2 --iterations 20
//   singa check resnet18.onnx                 # against onnxruntime, if installed
//
// Every failure is one line on stderr: exit 2 for bad input (arguments,
// files, models, shapes), 1 when a check fails, 0 otherwise.
#include <iostream>

#include "cli.h"
#include "singa/ops/tape.h"

int main(int argc, char** argv) {
  using namespace singa::cli;
  std::string command;  // known once the command line names it
  const auto prefix = [&] { return command.empty() ? "singa: " : "singa " + command + ": "; };
  try {
    const CommandLine line = ParseCommandLine(argc, argv, command);
    if (!line.text.empty()) {
      std::cout << line.text;
      return 0;
    }
    singa::NoGradGuard inference;  // no tape, so runs replay sonnx's static plan
    return line.args.run(line.args);
  } catch (const UsageError& e) {
    std::cerr << prefix() << OneLine(e.what()) << " (see singa " << command
              << (command.empty() ? "" : " ") << "--help)\n";
  } catch (const singa::Error& e) {
    std::cerr << prefix() << OneLine(e.what()) << "\n";
  } catch (const std::exception& e) {
    // Not one of singa's errors: a bug or the machine (memory), still one line.
    std::cerr << prefix() << "internal error: " << OneLine(e.what()) << "\n";
    return 1;
  }
  return 2;
}
