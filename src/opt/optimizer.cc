#include "singa/opt/optimizer.h"

#include <cmath>

#include "singa/autograd/autograd.h"
#include "singa/core/parallel.h"
#if SINGA_CUDA
#include "kernels/cuda/cuda.h"
#endif

namespace singa::opt {

// Whether this build has the GPU kernels of SGD and Adam.
#if SINGA_CUDA
constexpr bool kGpuKernels = true;
#else
constexpr bool kGpuKernels = false;
#endif

namespace {
constexpr int64_t kGrain = 1 << 14;

std::shared_ptr<const Scheduler> OrConstant(std::shared_ptr<const Scheduler> s, double lr) {
  return s ? std::move(s) : std::make_shared<Constant>(lr);
}

}  // namespace

ExponentialDecay::ExponentialDecay(double init_value, int64_t decay_steps, double decay_rate,
                                   bool staircase)
    : init_(init_value), rate_(decay_rate), steps_(decay_steps), staircase_(staircase) {
  SINGA_CHECK(decay_steps > 0, Error, "ExponentialDecay: decay_steps must be positive");
}

double ExponentialDecay::operator()(int64_t step) const {
  double e = static_cast<double>(step) / static_cast<double>(steps_);
  if (staircase_) e = std::floor(e);
  return init_ * std::pow(rate_, e);
}

Optimizer::Optimizer(std::shared_ptr<const Scheduler> lr) : lr_(std::move(lr)) {}

Optimizer::Slots& Optimizer::SlotsFor(const Tensor& param) {
  auto it = slots_.find(param.id());
  if (it != slots_.end()) return it->second;
  Slots s;
  s.name = param.name().empty() ? "param" + std::to_string(slots_.size()) : param.name();
  // Slots live across steps: created now even while a step is captured.
  CaptureSuspendGuard now(param.device());
  for (const std::string& slot : SlotNames()) {
    Tensor t = Tensor::Zeros(param.shape(), param.dtype(), param.device());
    auto p = pending_.find(s.name + ":" + slot);
    if (p != pending_.end()) {
      t.CopyFrom(p->second);
      pending_.erase(p);
    }
    s.tensors.push_back(t);
  }
  auto c = pending_.find(s.name + ":count");
  if (c != pending_.end()) {
    *s.count = c->second.Item<int64_t>();
    pending_.erase(c);
  }
  return slots_.emplace(param.id(), std::move(s)).first->second;
}

void Optimizer::Update(const Tensor& param, const Tensor& grad) {
  SINGA_CHECK(param.dtype() == DType::kFloat32 || param.dtype() == DType::kFloat64, DTypeError,
              "optimizer: parameter '" << param.name() << "' is " << param.ToString()
                                       << "; float32 and float64 are supported");
  SINGA_CHECK(grad.shape() == param.shape() && grad.dtype() == param.dtype(), ShapeError,
              "optimizer: gradient " << grad.ToString() << " does not match parameter '"
                                     << param.name() << "' " << param.ToString());
  SINGA_CHECK(param.is_contiguous(), Error,
              "optimizer: parameter '" << param.name() << "' must be contiguous");
  Slots& s = SlotsFor(param);
  device_ = param.device();
  Tensor g = grad.Contiguous();
  TensorList writes = s.tensors;
  writes.push_back(param);
  param.device().Exec(
      [this, p = param.Detach(), g, slots = s.tensors, count = s.count, step = step_]() mutable {
        if (p.device().type == DeviceType::kCuda && updates_on_gpu()) {
          UpdateArgs a{p.dtype(), p.raw_data(),  g.raw_data(), {},
                       p.numel(), (*lr_)(*step), *count,       p.device().index};
          for (const Tensor& t : slots) a.slots.push_back(t.raw_data());
          Apply(a);
          ++*count;
          return;
        }
        // The update loops run on the host: a GPU's parameter, gradient and
        // slots are copied there and back (ToDevice is a no-op on the CPU).
        const Device host = Device::Cpu();
        Tensor hp = p.ToDevice(host);
        const Tensor hg = g.ToDevice(host);
        TensorList hs;
        for (const Tensor& t : slots) hs.push_back(t.ToDevice(host));
        UpdateArgs a{hp.dtype(), hp.raw_data(), hg.raw_data(), {},
                     hp.numel(), (*lr_)(*step), *count};
        for (const Tensor& t : hs) a.slots.push_back(t.raw_data());
        Apply(a);
        ++*count;
        if (p.device() == host) return;
        p.CopyFrom(hp);
        for (size_t i = 0; i < slots.size(); ++i) slots[i].CopyFrom(hs[i]);
      },
      std::span(&g, 1), writes);
}

void Optimizer::Step() {
  device_.Exec([step = step_] { ++*step; }, {}, {});
}

void Optimizer::BackwardAndUpdate(const Tensor& loss) {
  autograd::Backward(loss, Tensor(), [this](const Tensor& p, const Tensor& g) { Update(p, g); });
  Step();
}

std::map<std::string, Tensor> Optimizer::GetStates() const {
  std::map<std::string, Tensor> out;
  const std::vector<std::string> names = SlotNames();
  for (auto& [id, s] : slots_) {
    for (size_t i = 0; i < names.size(); ++i) out[s.name + ":" + names[i]] = s.tensors[i];
    out[s.name + ":count"] = Tensor::Scalar<int64_t>(*s.count);
  }
  for (auto& [k, v] : pending_) out.emplace(k, v);
  out["step"] = Tensor::Scalar<int64_t>(*step_);
  return out;
}

void Optimizer::SetStates(const std::map<std::string, Tensor>& states) {
  std::unordered_map<std::string, Slots*> by_name;
  for (auto& [id, s] : slots_) by_name[s.name] = &s;
  const std::vector<std::string> names = SlotNames();
  for (auto& [key, value] : states) {
    if (key == "step") {
      *step_ = value.Item<int64_t>();
      continue;
    }
    const size_t colon = key.rfind(':');
    SINGA_CHECK(colon != std::string::npos, Error,
                "optimizer set_states: '" << key << "' is not <param>:<slot> or step");
    const std::string param = key.substr(0, colon), slot = key.substr(colon + 1);
    auto it = by_name.find(param);
    if (it == by_name.end()) {
      pending_[key] = value.Clone();
      continue;
    }
    if (slot == "count") {
      *it->second->count = value.Item<int64_t>();
      continue;
    }
    size_t i = 0;
    while (i < names.size() && names[i] != slot) ++i;
    SINGA_CHECK(i < names.size(), Error,
                "optimizer set_states: unknown slot '" << slot << "' in '" << key << "'");
    Tensor& t = it->second->tensors[i];
    SINGA_CHECK(t.shape() == value.shape(), ShapeError,
                "optimizer set_states: '" << key << "' is " << t.ToString() << ", the value is "
                                          << value.ToString());
    t.CopyFrom(value);
  }
}

// ---- the update rules (torch.optim's, with SINGA's argument names) ------

SGD::SGD(Options o, std::shared_ptr<const Scheduler> lr) : Optimizer(OrConstant(lr, o.lr)), o_(o) {
  SINGA_CHECK(!o.nesterov || (o.momentum > 0 && o.dampening == 0), Error,
              "SGD: nesterov needs momentum > 0 and dampening 0");
}

std::vector<std::string> SGD::SlotNames() const {
  if (o_.momentum == 0) return {};
  return {"momentum"};
}

template <class T>
void SGD::Run(const UpdateArgs& a) const {
  T* p = static_cast<T*>(a.param);
  const T* g = static_cast<const T*>(a.grad);
  T* buf = a.slots.empty() ? nullptr : static_cast<T*>(a.slots[0]);
  const T lr = static_cast<T>(a.lr), wd = static_cast<T>(o_.weight_decay);
  const T mom = static_cast<T>(o_.momentum), damp = static_cast<T>(1 - o_.dampening);
  const bool first = a.count == 0, nesterov = o_.nesterov;
  ParallelFor(0, a.n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      T d = g[i] + wd * p[i];
      if (buf) {
        buf[i] = first ? d : mom * buf[i] + damp * d;
        d = nesterov ? d + mom * buf[i] : buf[i];
      }
      p[i] -= lr * d;
    }
  });
}

void SGD::Apply(const UpdateArgs& a) const {
#if SINGA_CUDA
  if (a.gpu >= 0) {
    cuda::SgdUpdate(a.gpu, a.dtype, a.param, a.grad, a.slots.empty() ? nullptr : a.slots[0], a.n,
                    a.lr, o_.weight_decay, o_.momentum, 1 - o_.dampening, a.count == 0,
                    o_.nesterov);
    return;
  }
#endif
  a.dtype == DType::kFloat32 ? Run<float>(a) : Run<double>(a);
}

bool SGD::updates_on_gpu() const { return kGpuKernels; }

RMSProp::RMSProp(Options o, std::shared_ptr<const Scheduler> lr)
    : Optimizer(OrConstant(lr, o.lr)), o_(o) {}

template <class T>
void RMSProp::Run(const UpdateArgs& a) const {
  T* p = static_cast<T*>(a.param);
  const T* g = static_cast<const T*>(a.grad);
  T* avg = static_cast<T*>(a.slots[0]);
  const T lr = static_cast<T>(a.lr), wd = static_cast<T>(o_.weight_decay);
  const T rho = static_cast<T>(o_.rho), eps = static_cast<T>(o_.epsilon);
  ParallelFor(0, a.n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const T d = g[i] + wd * p[i];
      avg[i] = rho * avg[i] + (1 - rho) * d * d;
      p[i] -= lr * d / (std::sqrt(avg[i]) + eps);
    }
  });
}

void RMSProp::Apply(const UpdateArgs& a) const {
  a.dtype == DType::kFloat32 ? Run<float>(a) : Run<double>(a);
}

AdaGrad::AdaGrad(Options o, std::shared_ptr<const Scheduler> lr)
    : Optimizer(OrConstant(lr, o.lr)), o_(o) {}

template <class T>
void AdaGrad::Run(const UpdateArgs& a) const {
  T* p = static_cast<T*>(a.param);
  const T* g = static_cast<const T*>(a.grad);
  T* hist = static_cast<T*>(a.slots[0]);
  const T lr = static_cast<T>(a.lr), wd = static_cast<T>(o_.weight_decay);
  const T eps = static_cast<T>(o_.epsilon);
  ParallelFor(0, a.n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const T d = g[i] + wd * p[i];
      hist[i] += d * d;
      p[i] -= lr * d / (std::sqrt(hist[i]) + eps);
    }
  });
}

void AdaGrad::Apply(const UpdateArgs& a) const {
  a.dtype == DType::kFloat32 ? Run<float>(a) : Run<double>(a);
}

Adam::Adam(Options o, std::shared_ptr<const Scheduler> lr)
    : Optimizer(OrConstant(lr, o.lr)), o_(o) {}

template <class T>
void Adam::Run(const UpdateArgs& a) const {
  T* p = static_cast<T*>(a.param);
  const T* g = static_cast<const T*>(a.grad);
  T* m = static_cast<T*>(a.slots[0]);
  T* v = static_cast<T*>(a.slots[1]);
  const double t = static_cast<double>(a.count + 1);
  const T b1 = static_cast<T>(o_.beta_1), b2 = static_cast<T>(o_.beta_2);
  const T step = static_cast<T>(a.lr / (1 - std::pow(o_.beta_1, t)));
  const T root_bc2 = static_cast<T>(std::sqrt(1 - std::pow(o_.beta_2, t)));
  const T eps = static_cast<T>(o_.epsilon), wd = static_cast<T>(o_.weight_decay);
  ParallelFor(0, a.n, kGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const T d = g[i] + wd * p[i];
      m[i] = b1 * m[i] + (1 - b1) * d;
      v[i] = b2 * v[i] + (1 - b2) * d * d;
      p[i] -= step * m[i] / (std::sqrt(v[i]) / root_bc2 + eps);
    }
  });
}

void Adam::Apply(const UpdateArgs& a) const {
#if SINGA_CUDA
  if (a.gpu >= 0) {
    const double t = static_cast<double>(a.count + 1);
    cuda::AdamUpdate(a.gpu, a.dtype, a.param, a.grad, a.slots[0], a.slots[1], a.n,
                     a.lr / (1 - std::pow(o_.beta_1, t)), std::sqrt(1 - std::pow(o_.beta_2, t)),
                     o_.beta_1, o_.beta_2, o_.epsilon, o_.weight_decay);
    return;
  }
#endif
  a.dtype == DType::kFloat32 ? Run<float>(a) : Run<double>(a);
}

bool Adam::updates_on_gpu() const { return kGpuKernels; }

}  // namespace singa::opt
