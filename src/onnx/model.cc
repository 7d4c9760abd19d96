#include "singa/onnx/model.h"

#include "singa/core/error.h"

namespace singa::sonnx {

SONNXModel::SONNXModel(std::shared_ptr<SingaRep> rep) : rep_(std::move(rep)) {
  SINGA_CHECK(rep_ != nullptr, Error, "SONNXModel: no imported model");
  for (auto& [name, t] : rep_->params()) {
    if (t.stores_grad())
      AddParam(name, t);
    else
      AddBuffer(name, t);
  }
}

void SONNXModel::Initialize(const TensorList& inputs) { rep_->AdoptBatchSize(inputs); }

}  // namespace singa::sonnx
