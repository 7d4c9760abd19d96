// singa run MODEL.onnx --input x.npy [...] --output out.npz
#include <iostream>

#include "cli.h"

namespace singa::cli {

int RunRun(const Args& args) {
  ApplyThreads(args);
  const std::string output = args.get("--output", "");
  if (args.has("--output") && !output.ends_with(".npy") && !output.ends_with(".npz"))
    throw UsageError("--output " + output +
                     ": the file name must end in .npy or .npz (an .npz holds every output by "
                     "name, an .npy one output)");
  Device::Cpu().SetRandSeed(static_cast<uint64_t>(args.get_int("--seed", 0, 0)));
  auto rep = sonnx::Prepare(args.model);
  // Refused before the run: one .npy file holds one array.
  if (output.ends_with(".npy") && rep->outputs().size() != 1)
    throw UsageError("--output " + output + ": the model has " +
                     std::to_string(rep->outputs().size()) +
                     " outputs and an .npy file holds one; write them to an .npz");
  const DimValues dims = ParseDims(args, rep->inputs());
  const TensorList inputs = ModelInputs(*rep, args, dims, args.has("--generate"));
  const TensorList outputs = rep->Run(inputs);
  NamedTensors named;
  for (size_t i = 0; i < outputs.size(); ++i) {
    named.emplace_back(rep->outputs()[i].name, outputs[i]);
    std::cout << rep->outputs()[i].name << ": " << outputs[i].ToString() << "\n";
  }
  if (args.has("--output")) {
    if (output.ends_with(".npy"))
      WriteNpy(output, named[0].second);
    else
      WriteNpz(output, named);
    std::cout << "wrote " << output << "\n";
  }
  return 0;
}

}  // namespace singa::cli
