// Trains a CNN (conv-relu-pool x2, linear x2) on scikit-learn's digits with
// the C++ API, in graph mode (default) or eagerly, and saves a loss/accuracy
// plot. The data is the CSV that scikit-learn ships (digits.csv.gz).
//
//   example_train_digits --data
//   .venv/lib/python3.11/site-packages/sklearn/datasets/data/digits.csv.gz
//                        [--eager] [--epochs 12] [--plot out/train_digits_cpp.png] [--min-accuracy
//                        0.97]
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "png_plot.h"
#include "singa/singa.h"

using namespace singa;

namespace {

struct Dataset {
  std::vector<float> x;  // [n, 64], scaled to [0, 1]
  std::vector<int32_t> y;
  int64_t size() const { return static_cast<int64_t>(y.size()); }
};

Dataset LoadDigits(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw IOError("cannot open the digits data '" + path + "'");
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) text.append(buf, n);
  gzclose(f);
  Dataset d;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::vector<float> row;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) row.push_back(std::stof(cell));
    if (row.size() != 65) throw IOError("'" + path + "': a row does not have 65 values");
    for (int i = 0; i < 64; ++i) d.x.push_back(row[i] / 16.0f);
    d.y.push_back(static_cast<int32_t>(row[64]));
  }
  return d;
}

class CNN : public nn::Model {
 public:
  CNN() {
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
    Tensor y = (*pool_)(nn::Op("Relu", {(*conv1_)(x[0])}));
    y = (*pool_)(nn::Op("Relu", {(*conv2_)(y)}));
    y = nn::Op("Relu", {(*fc1_)(nn::Op("Flatten", {y}))});
    return {(*fc2_)(y)};
  }

  TensorList TrainOneBatch(const TensorList& xy) override {
    Tensor out = Forward({xy[0]})[0];
    Tensor loss = nn::SoftmaxCrossEntropy(out, xy[1]);
    optimizer().BackwardAndUpdate(loss);
    return {out, loss};
  }

 private:
  std::shared_ptr<nn::Conv2d> conv1_, conv2_;
  std::shared_ptr<nn::Pooling> pool_;
  std::shared_ptr<nn::Linear> fc1_, fc2_;
};

void Progress(int epoch, int epochs, int64_t step, int64_t steps, double loss) {
  const int width = 30, done = static_cast<int>(width * step / steps);
  std::fprintf(stderr, "\repoch %d/%d [%s%s] %lld/%lld loss %.4f", epoch, epochs,
               std::string(done, '#').c_str(), std::string(width - done, ' ').c_str(),
               static_cast<long long>(step), static_cast<long long>(steps), loss);
  if (step == steps) std::fprintf(stderr, "\r%*s\r", 80, "");
}

int Argmax(const float* row, int n) {
  return static_cast<int>(std::max_element(row, row + n) - row);
}

}  // namespace

int main(int argc, char** argv) {
  std::string data, plot = "out/train_digits_cpp.png";
  int epochs = 12, batch = 64;
  bool eager = false;
  double min_accuracy = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--data")
      data = next();
    else if (a == "--epochs")
      epochs = std::stoi(next());
    else if (a == "--plot")
      plot = next();
    else if (a == "--eager")
      eager = true;
    else if (a == "--min-accuracy")
      min_accuracy = std::stod(next());
    else {
      std::cerr << "unknown argument " << a << "\n";
      return 2;
    }
  }
  if (data.empty()) {
    std::cerr << "usage: " << argv[0] << " --data PATH/digits.csv.gz [--eager] [--epochs N]\n";
    return 2;
  }
  try {
    Dataset all = LoadDigits(data);
    // A fixed shuffle, then 80% for training and 20% for testing.
    std::vector<int64_t> order(all.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(0);
    std::shuffle(order.begin(), order.end(), rng);
    const int64_t n_train = all.size() * 4 / 5, steps = n_train / batch;

    Device::Cpu().SetRandSeed(0);
    CNN model;
    model.SetOptimizer(std::make_shared<opt::SGD>(opt::SGD::Options{0.05, 0.9, 0, 1e-5, false}));
    Tensor x({batch, 1, 8, 8}), y({batch}, DType::kInt32);
    model.Compile({x}, /*is_train=*/true, /*use_graph=*/!eager);

    std::vector<double> losses, train_acc, test_acc;
    auto start = std::chrono::steady_clock::now();
    for (int epoch = 1; epoch <= epochs; ++epoch) {
      std::shuffle(order.begin(), order.begin() + n_train, rng);
      double total = 0;
      int64_t correct = 0;
      for (int64_t s = 0; s < steps; ++s) {
        float* px = x.data<float>();
        int32_t* py = y.data<int32_t>();
        for (int64_t b = 0; b < batch; ++b) {
          const int64_t k = order[s * batch + b];
          std::memcpy(px + b * 64, all.x.data() + k * 64, 64 * sizeof(float));
          py[b] = all.y[k];
        }
        TensorList r = model.Call({x, y});
        total += r[1].Item<double>();
        std::vector<float> out = r[0].ToVector<float>();
        for (int64_t b = 0; b < batch; ++b) correct += Argmax(&out[b * 10], 10) == py[b];
        Progress(epoch, epochs, s + 1, steps, total / double(s + 1));
      }
      // Test accuracy in inference mode (BatchNorm/Dropout would switch too).
      model.Eval();
      const int64_t n_test = all.size() - n_train;
      Tensor tx({n_test, 1, 8, 8});
      for (int64_t i = 0; i < n_test; ++i)
        std::memcpy(tx.data<float>() + i * 64, all.x.data() + order[n_train + i] * 64, 64 * 4);
      std::vector<float> out = model.Call({tx})[0].ToVector<float>();
      int64_t right = 0;
      for (int64_t i = 0; i < n_test; ++i)
        right += Argmax(&out[i * 10], 10) == all.y[order[n_train + i]];
      model.Train();
      losses.push_back(total / double(steps));
      train_acc.push_back(double(correct) / double(steps * batch));
      test_acc.push_back(double(right) / double(n_test));
      std::printf("epoch %2d  loss %.4f  train acc %.4f  test acc %.4f\n", epoch, losses.back(),
                  train_acc.back(), test_acc.back());
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s mode: %.2f s for %d epochs; test accuracy %.4f\n", eager ? "eager" : "graph",
                secs, epochs, test_acc.back());

    std::filesystem::path p(plot);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
    examples::PngPlot png(720, 300);
    png.Panel(0, {losses}, {{31, 119, 180}});
    png.Panel(1, {train_acc, test_acc}, {{31, 119, 180}, {255, 127, 14}}, 0, 1);
    png.Save(plot);
    std::printf("plot saved to %s (left: loss; right: train (blue) and test (orange) accuracy)\n",
                plot.c_str());
    if (test_acc.back() < min_accuracy) {
      std::fprintf(stderr, "test accuracy %.4f is below %.4f\n", test_acc.back(), min_accuracy);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
