// Data-parallel training of the digits CNN (train_digits.cc's) over MPI with
// opt::DistOpt: each rank trains on its own share of the training set, the
// gradients are averaged across the ranks, rank 0 prints the loss and
// accuracies reduced over the ranks and saves a plot.
//
//   mpirun -np 2 build/example_train_digits_dist --data …/sklearn/datasets/data/digits.csv.gz
//   mpirun -np 2 build/example_train_digits_dist --data … --option fp16,sparseTopK --spars 0.05
//   build/example_train_digits_dist --data …                 # one process (world size 1)
//
// (as root add --allow-run-as-root; with more ranks than cores add
// --oversubscribe.) --option takes a comma-separated list of fp32, fp16,
// partialUpdate, sparseTopK, sparseThreshold; each trains from the same
// initial model. With --min-accuracy the exit status is 1 when an option's
// final test accuracy is below it.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "digits.h"
#include "png_plot.h"
#include "singa/dist/communicator.h"
#include "singa/opt/dist_opt.h"
#include "singa/singa.h"

using namespace singa;

namespace {

const std::vector<std::string> kOptions = {"fp32", "fp16", "partialUpdate", "sparseTopK",
                                           "sparseThreshold"};

class DistCNN : public examples::DigitsCNN {
 public:
  DistCNN(opt::DistOpt& dist, std::string option, float spars)
      : dist_(dist), option_(std::move(option)), spars_(spars) {}

 protected:
  void Update(const Tensor& loss) override {
    if (option_ == "fp32")
      dist_.BackwardAndUpdate(loss);
    else if (option_ == "fp16")
      dist_.BackwardAndUpdateHalf(loss);
    else if (option_ == "partialUpdate")
      dist_.BackwardAndPartialUpdate(loss);
    else if (option_ == "sparseTopK")
      dist_.BackwardAndSparseUpdate(loss, spars_, /*topK=*/true);
    else
      dist_.BackwardAndSparseUpdate(loss, spars_, /*topK=*/false);
  }

 private:
  opt::DistOpt& dist_;
  std::string option_;
  float spars_;
};

struct Config {
  std::string data, plot = "out/train_digits_dist_cpp.png";
  std::vector<std::string> options = {"fp32"};
  int epochs = 10, batch = 32;
  float spars = -1;  // < 0: 0.05 for sparseTopK, 0.01 for sparseThreshold
  int64_t buff_size = 4194304;
  bool eager = false;
  double min_accuracy = 0;
};

struct History {
  int rank = 0;
  std::vector<double> loss, train_acc, test_acc;
};

// The sums over the ranks of a few numbers (AllReduce averages).
std::vector<double> SumOverRanks(dist::Communicator& comm, const std::vector<double>& v) {
  std::vector<float> f(v.begin(), v.end());
  Tensor t = Tensor::FromVector<float>({static_cast<int64_t>(f.size())}, f);
  comm.AllReduce(t);
  comm.Wait();
  std::vector<double> out;
  for (float x : t.ToVector<float>()) out.push_back(double(x) * comm.world_size());
  return out;
}

History Train(const Config& cfg, const std::string& option, const examples::Digits& all,
              const examples::Split& split) {
  Device::Cpu().SetRandSeed(0);
  auto sgd = std::make_shared<opt::SGD>(opt::SGD::Options{0.05, 0.9, 0, 1e-5, false});
  opt::DistOpt dist(sgd, dist::Communicator::Options{.buff_size = cfg.buff_size});
  const int rank = dist.global_rank(), world = dist.world_size();
  const float spars = cfg.spars >= 0 ? cfg.spars : option == "sparseTopK" ? 0.05f : 0.01f;

  // This rank's contiguous share of the training and test rows.
  auto share = [&](const std::vector<int64_t>& rows) {
    const size_t n = rows.size() / world;
    return std::vector<int64_t>(rows.begin() + rank * n, rows.begin() + (rank + 1) * n);
  };
  std::vector<int64_t> train = share(split.train), test = share(split.test);
  // Graph mode replays one batch shape: every rank takes full batches only.
  const int64_t steps = static_cast<int64_t>(train.size()) / cfg.batch;
  SINGA_CHECK(steps > 0, Error,
              "rank " << rank << ": " << train.size() << " training rows, fewer than one batch of "
                      << cfg.batch);

  DistCNN model(dist, option, spars);
  model.SetOptimizer(sgd);
  Tensor x({cfg.batch, 1, 8, 8}), y({cfg.batch}, DType::kInt32);
  model.Compile({x}, /*is_train=*/true, /*use_graph=*/!cfg.eager);
  TensorList params;
  for (auto& [name, p] : model.GetParams()) params.push_back(p);
  dist.BroadcastParams(params);  // one starting model whatever each rank drew

  std::mt19937_64 rng(1000 + rank);
  History h;
  h.rank = rank;
  auto start = std::chrono::steady_clock::now();
  for (int epoch = 1; epoch <= cfg.epochs; ++epoch) {
    std::shuffle(train.begin(), train.end(), rng);
    double total = 0;
    int64_t correct = 0;
    for (int64_t s = 0; s < steps; ++s) {
      examples::FillBatch(all, train, s * cfg.batch, x, y);
      TensorList r = model.Call({x, y});
      total += r[1].Item<double>();
      correct += examples::CountCorrect(r[0], y);
      if (rank == 0) examples::Progress(epoch, cfg.epochs, s + 1, steps, total / double(s + 1));
    }
    const int64_t right = examples::CountCorrect(model, all, test);
    std::vector<double> sums =
        SumOverRanks(dist.communicator(),
                     {total / double(steps), double(correct), double(right), double(test.size())});
    h.loss.push_back(sums[0] / world);
    h.train_acc.push_back(sums[1] / double(steps * cfg.batch * world));
    h.test_acc.push_back(sums[2] / sums[3]);
    if (rank == 0)
      std::printf("%-15s epoch %2d  loss %.4f  train acc %.4f  test acc %.4f\n", option.c_str(),
                  epoch, h.loss.back(), h.train_acc.back(), h.test_acc.back());
  }
  if (rank == 0) {
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf(
        "%s: %d rank(s), %s mode, %.2f s for %d epochs; test accuracy %.4f; rank 0 sent "
        "%.2f MiB\n",
        option.c_str(), world, cfg.eager ? "eager" : "graph", secs, cfg.epochs, h.test_acc.back(),
        double(dist.communicator().bytes_sent()) / (1 << 20));
    std::fflush(stdout);
  }
  return h;
}

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (std::find(kOptions.begin(), kOptions.end(), item) == kOptions.end())
      throw std::invalid_argument("unknown --option '" + item +
                                  "'; one of fp32, fp16, partialUpdate, sparseTopK, "
                                  "sparseThreshold");
    out.push_back(item);
  }
  return out;
}

Config ParseArgs(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--data")
      cfg.data = next();
    else if (a == "--option")
      cfg.options = SplitCommas(next());
    else if (a == "--spars")
      cfg.spars = std::stof(next());
    else if (a == "--epochs")
      cfg.epochs = std::stoi(next());
    else if (a == "--batch")
      cfg.batch = std::stoi(next());
    else if (a == "--buff-size")
      cfg.buff_size = std::stoll(next());
    else if (a == "--plot")
      cfg.plot = next();
    else if (a == "--eager")
      cfg.eager = true;
    else if (a == "--min-accuracy")
      cfg.min_accuracy = std::stod(next());
    else
      throw std::invalid_argument("unknown argument " + a);
  }
  if (cfg.data.empty())
    throw std::invalid_argument(
        "usage: example_train_digits_dist --data PATH/digits.csv.gz [--option fp32,fp16,...] "
        "[--spars S] [--epochs N] [--batch B] [--eager] [--plot PNG] [--min-accuracy A]");
  return cfg;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  try {
    cfg = ParseArgs(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  try {
    // mpirun binds each rank to its share of the cores: one thread per CPU
    // this process may run on (more would wait on each other).
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) SetNumThreads(CPU_COUNT(&cpus));
    examples::Digits all = examples::LoadDigits(cfg.data);
    // The same fixed shuffle on every rank: 80% for training, 20% for testing.
    examples::Split split = examples::ShuffleSplit(all, 0.8, 0);
    std::vector<History> runs;
    for (const std::string& option : cfg.options) runs.push_back(Train(cfg, option, all, split));
    if (runs[0].rank != 0) return 0;

    std::filesystem::path p(cfg.plot);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
    const std::vector<examples::Rgb> colors = {
        {31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40}, {148, 103, 189}};
    std::vector<std::vector<double>> losses, accs;
    std::vector<examples::Rgb> used;
    for (size_t i = 0; i < runs.size(); ++i) {
      losses.push_back(runs[i].loss);
      accs.push_back(runs[i].test_acc);
      used.push_back(colors[i % colors.size()]);
    }
    examples::PngPlot png(720, 300);
    png.Panel(0, losses, used);
    png.Panel(1, accs, used, 0, 1);
    png.Save(cfg.plot);
    std::printf(
        "plot saved to %s (left: loss; right: test accuracy; one colour per option, in "
        "--option order: blue, orange, green, red, purple)\n",
        cfg.plot.c_str());
    int status = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].test_acc.back() < cfg.min_accuracy) {
        std::fprintf(stderr, "%s: test accuracy %.4f is below %.4f\n", cfg.options[i].c_str(),
                     runs[i].test_acc.back(), cfg.min_accuracy);
        status = 1;
      }
    }
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
