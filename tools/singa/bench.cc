// singa bench MODEL.onnx --batch 1 8 --threads N --iterations K
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include "cli.h"
#include "singa/core/file.h"
#include "singa/core/parallel.h"

namespace singa::cli {
namespace {

// Linear interpolation between the closest ranks (numpy's default).
double Percentile(std::vector<double> sorted, double p) {
  if (sorted.size() == 1) return sorted[0];
  const double at = p / 100 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(at);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - static_cast<double>(lo));
}

double PeakRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

// The op types that took the most time in `p`, one line each.
void PrintTopOps(const sonnx::RunProfile& p, int64_t batch) {
  std::map<std::string, std::pair<double, int>> by_type;
  double nodes_us = 0;
  for (const sonnx::NodeProfile& n : p.nodes) {
    auto& [us, count] = by_type[n.op_type];
    us += n.duration_us;
    ++count;
    nodes_us += n.duration_us;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> rows(by_type.begin(), by_type.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::printf("profile of batch %lld: %.3f ms, %zu nodes (%.3f ms), %s\n",
              static_cast<long long>(batch), p.duration_us / 1000, p.nodes.size(), nodes_us / 1000,
              p.planned ? "the static plan" : "a node walk");
  std::printf("  %-24s %10s %7s %6s\n", "op type", "ms", "share", "nodes");
  for (size_t i = 0; i < rows.size() && i < 10; ++i)
    std::printf("  %-24s %10.3f %6.1f%% %6d\n", rows[i].first.c_str(), rows[i].second.first / 1000,
                p.duration_us > 0 ? 100 * rows[i].second.first / p.duration_us : 0.0,
                rows[i].second.second);
}

}  // namespace

int RunBench(const Args& args) {
  ApplyThreads(args);
  const std::vector<int64_t> batches = args.get_ints("--batch", {1}, 1);
  const int64_t iterations = args.get_int("--iterations", 20, 1);
  const int64_t warmup = args.get_int("--warmup", 2, 0);
  const std::string profile_path = args.get("--profile", "");
  std::string trace;
  size_t trace_rows = 0;
  Device::Cpu().SetRandSeed(static_cast<uint64_t>(args.get_int("--seed", 0, 0)));

  auto rep = sonnx::Prepare(args.model);
  DimValues dims = ParseDims(args, rep->inputs());
  // --batch sets the first dim of the inputs whose first dim is symbolic.
  bool batched = false;
  for (const auto& in : rep->inputs())
    batched |= in.has_shape && !in.dims.empty() && in.dims[0] < 0;
  if (!batched && !rep->inputs().empty())
    for (int64_t b : batches)
      for (const auto& in : rep->inputs())
        if (in.has_shape && !in.dims.empty() && in.dims[0] != b)
          throw UsageError("--batch " + std::to_string(b) +
                           ": the model's inputs have a fixed "
                           "first dim (" +
                           Describe(in) + ")");

  // Inputs that cannot be generated fail here, before any output.
  dims.batch = batches[0];
  for (const auto& in : rep->inputs()) GeneratedInput(in, dims);

  std::printf("model %s, %d thread%s, %lld iterations after %lld warm-up\n", args.model.c_str(),
              GetNumThreads(), GetNumThreads() == 1 ? "" : "s", static_cast<long long>(iterations),
              static_cast<long long>(warmup));
  std::printf("%6s %10s %10s %10s %10s %12s %12s\n", "batch", "p50 ms", "p90 ms", "p99 ms",
              "mean ms", "samples/s", "pool peak");
  // A progress line on a terminal (long runs of large models); none in pipes and logs.
  const bool progress = isatty(STDERR_FILENO);
  for (int64_t b : batches) {
    dims.batch = b;
    TensorList inputs;
    for (const auto& in : rep->inputs()) inputs.push_back(GeneratedInput(in, dims));
    for (int64_t i = 0; i < warmup; ++i) rep->Run(inputs);
    Device::Cpu().mem_pool().ResetPeak();
    std::vector<double> ms;
    for (int64_t i = 0; i < iterations; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      TensorList out = rep->Run(inputs);
      const auto t1 = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      if (progress)
        std::fprintf(stderr, "\rbatch %lld: %lld/%lld runs", static_cast<long long>(b),
                     static_cast<long long>(i + 1), static_cast<long long>(iterations));
    }
    if (progress) std::fprintf(stderr, "\r%40s\r", "");
    std::sort(ms.begin(), ms.end());
    double mean = 0;
    for (double v : ms) mean += v / static_cast<double>(ms.size());
    const double per_second = mean > 0 ? static_cast<double>(b) * 1000 / mean : 0;
    std::printf("%6lld %10.3f %10.3f %10.3f %10.3f %12.1f %12s\n", static_cast<long long>(b),
                Percentile(ms, 50), Percentile(ms, 90), Percentile(ms, 99), mean, per_second,
                Bytes(static_cast<double>(Device::Cpu().mem_pool().stats().peak_bytes)).c_str());
    if (!profile_path.empty()) {
      sonnx::RunProfile p = rep->Profile(ValueList(inputs.begin(), inputs.end()));
      PrintTopOps(p, b);
      // Each batch size's events on a row of its own.
      trace += (trace.empty() ? "" : ",\n") + p.TraceEvents(static_cast<int>(trace_rows++) + 1);
    }
  }
  if (!profile_path.empty()) {
    const std::string json = "[\n" + trace + "\n]\n";
    WriteFileAtomically(
        profile_path, [&](std::FILE* f) { std::fwrite(json.data(), 1, json.size(), f); },
        "singa bench --profile");
    std::printf("profile written to %s\n", profile_path.c_str());
  }
  std::printf("peak RSS %s (the whole process: model, inputs, runs)\n",
              Bytes(PeakRssBytes()).c_str());
  std::cout.flush();
  return 0;
}

}  // namespace singa::cli
