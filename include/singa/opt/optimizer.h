// Optimizers (SINGA's opt module): SGD with momentum, dampening, weight decay
// and Nesterov; RMSProp; AdaGrad; Adam; the learning rate from a Scheduler of
// the step count. Each update is one fused in-place pass over the parameter
// and its slots, run through Device::Exec, so a captured training step
// replays its updates natively; the step count and the learning rate are
// read when the update runs, not when it is recorded.
//
//   opt::SGD sgd(opt::SGD::Options{.lr = 0.05, .momentum = 0.9});
//   Tensor loss = nn::SoftmaxCrossEntropy(model(x), y);
//   sgd.BackwardAndUpdate(loss);      // backward, an update per parameter, Step()
//
// Slots are keyed by parameter identity and saved under the parameter's name
// ("conv1.W:momentum"); every parameter given to an optimizer whose states
// are saved needs a unique name (Model::Compile names them).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "singa/core/tensor.h"

namespace singa::opt {

// The learning rate as a function of the step count.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual double operator()(int64_t step) const = 0;
};

class Constant : public Scheduler {
 public:
  explicit Constant(double value) : value_(value) {}
  double operator()(int64_t) const override { return value_; }

 private:
  double value_;
};

// init_value * decay_rate ^ (step / decay_steps), the exponent floored with staircase.
class ExponentialDecay : public Scheduler {
 public:
  ExponentialDecay(double init_value, int64_t decay_steps, double decay_rate,
                   bool staircase = false);
  double operator()(int64_t step) const override;

 private:
  double init_, rate_;
  int64_t steps_;
  bool staircase_;
};

class Optimizer {
 public:
  explicit Optimizer(std::shared_ptr<const Scheduler> lr);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Updates `param` in place from `grad` (same shape; float32 or float64).
  void Update(const Tensor& param, const Tensor& grad);
  // Counts one step (the scheduler's input).
  void Step();
  // Backward from `loss`, updating every parameter as soon as its gradient
  // is complete, then Step().
  void BackwardAndUpdate(const Tensor& loss);

  // Slots and the step count by name ("<param>:<slot>", "step").
  std::map<std::string, Tensor> GetStates() const;
  // Restores what GetStates returned. Slots of parameters not yet seen are
  // kept until the parameter's first update.
  void SetStates(const std::map<std::string, Tensor>& states);

  int64_t step() const { return *step_; }
  double learning_rate() const { return (*lr_)(*step_); }

 protected:
  // The slot tensors a parameter needs (named), created zero on first use.
  virtual std::vector<std::string> SlotNames() const = 0;
  // One update of contiguous data: float32 or float64 (dtype), n elements,
  // slots in SlotNames() order; count is the number of earlier updates of
  // this parameter.
  struct UpdateArgs {
    DType dtype;
    void* param;
    const void* grad;
    std::vector<void*> slots;
    int64_t n;
    double lr;
    int64_t count;
    int gpu = -1;  // the GPU whose memory the pointers are, or -1 (host memory)
  };
  virtual void Apply(const UpdateArgs& a) const = 0;
  // Whether Apply takes pointers to GPU memory (a fused GPU kernel); else a
  // GPU parameter's update runs on host copies.
  virtual bool updates_on_gpu() const { return false; }

 private:
  struct Slots {
    std::string name;
    std::vector<Tensor> tensors;
    std::shared_ptr<int64_t> count = std::make_shared<int64_t>(0);
  };
  Slots& SlotsFor(const Tensor& param);

  std::shared_ptr<const Scheduler> lr_;
  std::shared_ptr<int64_t> step_ = std::make_shared<int64_t>(0);
  // Where the last update ran: Step counts there, so that a step captured
  // on a GPU's graph counts on every replay.
  Device device_;
  std::unordered_map<const void*, Slots> slots_;
  std::map<std::string, Tensor> pending_;  // SetStates entries of unseen parameters
};

class SGD : public Optimizer {
 public:
  struct Options {
    double lr = 0.1;
    double momentum = 0, dampening = 0, weight_decay = 0;
    bool nesterov = false;
  };
  explicit SGD(Options o, std::shared_ptr<const Scheduler> lr = nullptr);

 protected:
  std::vector<std::string> SlotNames() const override;
  void Apply(const UpdateArgs& a) const override;
  bool updates_on_gpu() const override;

 private:
  template <class T>
  void Run(const UpdateArgs& a) const;
  Options o_;
};

class RMSProp : public Optimizer {
 public:
  struct Options {
    double lr = 0.01, rho = 0.9, epsilon = 1e-8, weight_decay = 0;
  };
  explicit RMSProp(Options o, std::shared_ptr<const Scheduler> lr = nullptr);

 protected:
  std::vector<std::string> SlotNames() const override { return {"running_average"}; }
  void Apply(const UpdateArgs& a) const override;

 private:
  template <class T>
  void Run(const UpdateArgs& a) const;
  Options o_;
};

class AdaGrad : public Optimizer {
 public:
  struct Options {
    double lr = 0.01, epsilon = 1e-8, weight_decay = 0;
  };
  explicit AdaGrad(Options o, std::shared_ptr<const Scheduler> lr = nullptr);

 protected:
  std::vector<std::string> SlotNames() const override { return {"history"}; }
  void Apply(const UpdateArgs& a) const override;

 private:
  template <class T>
  void Run(const UpdateArgs& a) const;
  Options o_;
};

class Adam : public Optimizer {
 public:
  struct Options {
    double lr = 1e-3, beta_1 = 0.9, beta_2 = 0.999, epsilon = 1e-8, weight_decay = 0;
  };
  explicit Adam(Options o, std::shared_ptr<const Scheduler> lr = nullptr);

 protected:
  std::vector<std::string> SlotNames() const override { return {"m", "v"}; }
  void Apply(const UpdateArgs& a) const override;
  bool updates_on_gpu() const override;

 private:
  template <class T>
  void Run(const UpdateArgs& a) const;
  Options o_;
};

}  // namespace singa::opt
