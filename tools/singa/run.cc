// singa run MODEL.onnx --input x.npy [...] --output out.npz
#include <iostream>

#include "cli.h"

namespace singa::cli {

int RunRun(const Args& args) {
  ApplyThreads(args);
  const std::string output = args.get("--output", "");
  if (args.has("--output") && !output.ends_with(".npy") && !output.ends_with(".npz"))
    throw UsageError("--output " + output + ": the file name must end in .npy or .npz");
  Device::Cpu().SetRandSeed(static_cast<uint64_t>(args.get_int("--seed", 0, 0)));
  auto rep = sonnx::Prepare(args.model);
  const DimValues dims = ParseDims(args, rep->inputs());
  const TensorList inputs = ModelInputs(*rep, args, dims, args.has("--generate"));
  const TensorList outputs = rep->Run(inputs);
  NamedTensors named;
  for (size_t i = 0; i < outputs.size(); ++i) {
    named.emplace_back(rep->outputs()[i].name, outputs[i]);
    std::cout << rep->outputs()[i].name << ": " << outputs[i].ToString() << "\n";
  }
  if (args.has("--output")) {
    const std::string path = args.get("--output", "");
    if (path.ends_with(".npy")) {
      if (named.size() != 1)
        throw UsageError("--output " + path + ": the model has " + std::to_string(named.size()) +
                         " outputs; write them to an .npz");
      WriteNpy(path, named[0].second);
    } else {
      WriteNpz(path, named);
    }
    std::cout << "wrote " << path << "\n";
  }
  return 0;
}

}  // namespace singa::cli
