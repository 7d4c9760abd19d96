// SONNXModel: an imported ONNX model as an nn::Model (SINGA's
// sonnx.SONNXModel), to re-train it or extend it. Its floating-point
// initializers are the parameters, named by their ONNX names; the others
// are buffers (GetStates). A subclass overrides Forward to cut the graph
// (Run's last_layers) and append layers, and TrainOneBatch to train.
//
//   class Transfer : public sonnx::SONNXModel {
//    public:
//     explicit Transfer(std::shared_ptr<sonnx::SingaRep> rep)
//         : SONNXModel(std::move(rep)) { head_ = Add("head", std::make_shared<nn::Linear>(10)); }
//     TensorList Forward(const TensorList& x) override {
//       return (*head_)(Run(x, /*last_layers=*/-2));   // drop the old classifier
//     }
//     ...
//   };
//   Transfer m(sonnx::Prepare("resnet18.onnx"));
//   m.Compile({x}, /*is_train=*/true);   m.Call({x, y});   m.SaveStates("t.states");
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "singa/nn/model.h"
#include "singa/onnx/sonnx.h"

namespace singa::sonnx {

class SONNXModel : public nn::Model {
 public:
  explicit SONNXModel(std::shared_ptr<SingaRep> rep);

  // The imported graph: Run(inputs, last_layers, aux_output) as SingaRep::Run.
  TensorList Run(const TensorList& inputs, int last_layers = -1,
                 const std::vector<std::string>& aux_output = {}) const {
    return rep_->Run(inputs, last_layers, aux_output);
  }
  const std::shared_ptr<SingaRep>& rep() const { return rep_; }

 protected:
  // The whole graph's outputs.
  TensorList Forward(const TensorList& inputs) override { return Run(inputs); }
  // Compile's (or the first call's) inputs give the batch size: their first
  // dimensions replace the declared ones (SingaRep::AdoptBatchSize).
  void Initialize(const TensorList& inputs) override;

 private:
  std::shared_ptr<SingaRep> rep_;
};

}  // namespace singa::sonnx
