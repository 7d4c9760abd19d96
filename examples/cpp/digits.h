// What the C++ digits examples share (train_digits.cc, train_digits_dist.cc):
// scikit-learn's digits CSV, the CNN (conv-relu-pool x2, linear x2), batch
// filling, evaluation and a progress bar.
//
//   examples::Digits all = examples::LoadDigits("…/digits.csv.gz");
//   examples::Split split = examples::ShuffleSplit(all, 0.8, /*seed=*/0);
//   examples::DigitsCNN model;              // TrainOneBatch calls Update(loss)
//   examples::FillBatch(all, split.train, /*first=*/0, x, y);
//   TensorList r = model.Call({x, y});       // {logits, loss}
//   int64_t right = examples::CountCorrect(model, all, split.test, device);
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "singa/singa.h"

namespace examples {

using singa::Device;
using singa::DType;
using singa::Tensor;
using singa::TensorList;

struct Digits {
  std::vector<float> x;  // [n, 64], scaled to [0, 1]
  std::vector<int32_t> y;
  int64_t size() const { return static_cast<int64_t>(y.size()); }
};

// The CSV scikit-learn ships (64 pixel values 0..16, then the label per row).
inline Digits LoadDigits(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw singa::IOError("cannot open the digits data '" + path + "'");
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) text.append(buf, n);
  gzclose(f);
  Digits d;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::vector<float> row;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) row.push_back(std::stof(cell));
    if (row.size() != 65) throw singa::IOError("'" + path + "': a row does not have 65 values");
    for (int i = 0; i < 64; ++i) d.x.push_back(row[i] / 16.0f);
    d.y.push_back(static_cast<int32_t>(row[64]));
  }
  return d;
}

// Row indices of the training and test images.
struct Split {
  std::vector<int64_t> train, test;
};

// A fixed shuffle, then the first `train_fraction` for training.
inline Split ShuffleSplit(const Digits& all, double train_fraction, uint64_t seed) {
  std::vector<int64_t> order(all.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  const auto n_train = static_cast<int64_t>(static_cast<double>(all.size()) * train_fraction);
  return {{order.begin(), order.begin() + n_train}, {order.begin() + n_train, order.end()}};
}

class DigitsCNN : public singa::nn::Model {
 public:
  DigitsCNN() {
    namespace nn = singa::nn;
    nn::Conv2d::Options pad1;
    pad1.padding = {1, 1};
    conv1_ = Add("conv1", std::make_shared<nn::Conv2d>(16, 3, pad1));
    conv2_ = Add("conv2", std::make_shared<nn::Conv2d>(32, 3, pad1));
    pool_ = Add("pool",
                std::make_shared<nn::Pooling>(std::vector<int64_t>{2, 2}, nn::Pooling::Options{}));
    fc1_ = Add("fc1", std::make_shared<nn::Linear>(64));
    fc2_ = Add("fc2", std::make_shared<nn::Linear>(10));
  }

  TensorList Forward(const TensorList& x) override {
    using singa::Call1;
    Tensor y = (*pool_)(Call1("Relu", {(*conv1_)(x[0])}));
    y = (*pool_)(Call1("Relu", {(*conv2_)(y)}));
    y = Call1("Relu", {(*fc1_)(Call1("Flatten", {y}))});
    return {(*fc2_)(y)};
  }

  TensorList TrainOneBatch(const TensorList& xy) override {
    Tensor out = Forward({xy[0]})[0];
    Tensor loss = singa::nn::SoftmaxCrossEntropy(out, xy[1]);
    Update(loss);
    return {out, loss};
  }

 protected:
  // Backward and the parameter update; the distributed example averages
  // the gradients across the ranks here.
  virtual void Update(const Tensor& loss) { optimizer().BackwardAndUpdate(loss); }

 private:
  std::shared_ptr<singa::nn::Conv2d> conv1_, conv2_;
  std::shared_ptr<singa::nn::Pooling> pool_;
  std::shared_ptr<singa::nn::Linear> fc1_, fc2_;
};

// Copies rows[first, first + batch) into x [batch, 1, 8, 8] and y [batch].
inline void FillBatch(const Digits& all, const std::vector<int64_t>& rows, int64_t first, Tensor& x,
                      Tensor& y) {
  const int64_t batch = y.numel();
  // Written on the host, then copied to x and y's device.
  Tensor hx(x.shape()), hy(y.shape(), DType::kInt32);
  float* px = hx.data<float>();
  int32_t* py = hy.data<int32_t>();
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t k = rows[first + b];
    std::memcpy(px + b * 64, all.x.data() + k * 64, 64 * sizeof(float));
    py[b] = all.y[k];
  }
  x.CopyFrom(hx);
  y.CopyFrom(hy);
}

inline int Argmax(const float* row, int n) {
  return static_cast<int>(std::max_element(row, row + n) - row);
}

// How many of the rows' labels the model predicts, in inference mode.
inline int64_t CountCorrect(singa::nn::Model& model, const Digits& all,
                            const std::vector<int64_t>& rows, Device device = Device::Cpu()) {
  const auto n = static_cast<int64_t>(rows.size());
  if (n == 0) return 0;
  model.Eval();
  Tensor x({n, 1, 8, 8});
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(x.data<float>() + i * 64, all.x.data() + rows[i] * 64, 64 * sizeof(float));
  std::vector<float> out = model.Call({x.ToDevice(device)})[0].ToVector<float>();
  model.Train();
  int64_t right = 0;
  for (int64_t i = 0; i < n; ++i) right += Argmax(&out[i * 10], 10) == all.y[rows[i]];
  return right;
}

inline int64_t CountCorrect(const Tensor& logits, const Tensor& labels) {
  std::vector<float> out = logits.ToVector<float>();
  std::vector<int32_t> y = labels.ToVector<int32_t>();
  int64_t right = 0;
  for (size_t b = 0; b < y.size(); ++b) right += Argmax(&out[b * 10], 10) == y[b];
  return right;
}

inline void Progress(int epoch, int epochs, int64_t step, int64_t steps, double loss) {
  const int width = 30, done = static_cast<int>(width * step / steps);
  std::fprintf(stderr, "\repoch %d/%d [%s%s] %lld/%lld loss %.4f", epoch, epochs,
               std::string(done, '#').c_str(), std::string(width - done, ' ').c_str(),
               static_cast<long long>(step), static_cast<long long>(steps), loss);
  if (step == steps) std::fprintf(stderr, "\r%*s\r", 80, "");
}

}  // namespace examples
