// Trains a CNN (conv-relu-pool x2, linear x2) on scikit-learn's digits with
// the C++ API, in graph mode (default) or eagerly, on the CPU or a GPU, and
// saves a loss/accuracy plot. The data is the CSV that scikit-learn ships (digits.csv.gz).
//
//   example_train_digits --data
//   .venv/lib/python3.11/site-packages/sklearn/datasets/data/digits.csv.gz
//                        [--eager] [--device cpu|cuda] [--epochs 12]
//                        [--plot out/train_digits_cpp.png] [--min-accuracy 0.97]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "digits.h"
#include "png_plot.h"
#include "singa/singa.h"

using namespace singa;

int main(int argc, char** argv) {
  std::string data, plot = "out/train_digits_cpp.png";
  int epochs = 12, batch = 64;
  bool eager = false;
  std::string device_name = "cpu";
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
    else if (a == "--device")
      device_name = next();
    else if (a == "--min-accuracy")
      min_accuracy = std::stod(next());
    else {
      std::cerr << "unknown argument " << a << "\n";
      return 2;
    }
  }
  if (data.empty()) {
    std::cerr << "usage: " << argv[0]
              << " --data PATH/digits.csv.gz [--eager] [--device cpu|cuda] [--epochs N]\n";
    return 2;
  }
  try {
    examples::Digits all = examples::LoadDigits(data);
    // A fixed shuffle, then 80% for training and 20% for testing.
    examples::Split split = examples::ShuffleSplit(all, 0.8, 0);
    std::mt19937_64 rng(0);
    const int64_t steps = static_cast<int64_t>(split.train.size()) / batch;

    if (device_name != "cpu" && device_name != "cuda")
      throw std::invalid_argument("--device must be cpu or cuda, not " + device_name);
    const Device device = device_name == "cuda" ? Device::Cuda(0) : Device::Cpu();
    device.SetRandSeed(0);  // the parameters are drawn from their device's generator
    examples::DigitsCNN model;
    model.SetOptimizer(std::make_shared<opt::SGD>(opt::SGD::Options{0.05, 0.9, 0, 1e-5, false}));
    Tensor x({batch, 1, 8, 8}, DType::kFloat32, device), y({batch}, DType::kInt32, device);
    model.Compile({x}, /*is_train=*/true, /*use_graph=*/!eager);

    std::vector<double> losses, train_acc, test_acc;
    auto start = std::chrono::steady_clock::now();
    for (int epoch = 1; epoch <= epochs; ++epoch) {
      std::shuffle(split.train.begin(), split.train.end(), rng);
      double total = 0;
      int64_t correct = 0;
      for (int64_t s = 0; s < steps; ++s) {
        examples::FillBatch(all, split.train, s * batch, x, y);
        TensorList r = model.Call({x, y});
        total += r[1].Item<double>();
        correct += examples::CountCorrect(r[0], y);
        examples::Progress(epoch, epochs, s + 1, steps, total / double(s + 1));
      }
      // Test accuracy in inference mode (BatchNorm/Dropout would switch too).
      const int64_t right = examples::CountCorrect(model, all, split.test, device);
      losses.push_back(total / double(steps));
      train_acc.push_back(double(correct) / double(steps * batch));
      test_acc.push_back(double(right) / double(split.test.size()));
      std::printf("epoch %2d  loss %.4f  train acc %.4f  test acc %.4f\n", epoch, losses.back(),
                  train_acc.back(), test_acc.back());
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s mode on %s: %.2f s for %d epochs; test accuracy %.4f\n",
                eager ? "eager" : "graph", device.ToString().c_str(), secs, epochs,
                test_acc.back());

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
