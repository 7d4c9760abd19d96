// libFuzzer target: ONNX model bytes -> Prepare -> Run on generated inputs,
// twice through the static plan (build, then replay) and once by node walk.
// A watchdog cancels a run that goes on past kRunBudget (a Loop without
// bound ends that way, as `rep.cancel()` ends it for a user). External data
// is read from a folder holding w.bin (4 KiB), as the corpus's models name it.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "cli.h"
#include "fuzz_common.h"
#include "singa/onnx/sonnx.h"

namespace {

using namespace std::chrono_literals;
constexpr auto kRunBudget = 2s;

class Watchdog {
 public:
  Watchdog() : thread_([this] { Loop(); }) { thread_.detach(); }

  // Cancels `rep` unless Disarm is called within kRunBudget.
  void Arm(const singa::sonnx::SingaRep* rep) {
    std::lock_guard<std::mutex> lock(mu_);
    rep_ = rep;
    deadline_ = std::chrono::steady_clock::now() + kRunBudget;
    cv_.notify_one();
  }
  void Disarm() {
    std::lock_guard<std::mutex> lock(mu_);
    rep_ = nullptr;
  }
  struct Armed {
    Armed(Watchdog& w, const singa::sonnx::SingaRep& rep) : w(w) { w.Arm(&rep); }
    ~Armed() { w.Disarm(); }
    Watchdog& w;
  };

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait_for(lock, 10ms);
      if (rep_ && std::chrono::steady_clock::now() > deadline_) {
        rep_->Cancel();
        rep_ = nullptr;
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  const singa::sonnx::SingaRep* rep_ = nullptr;
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;
};

// Inputs as `singa run` generates them (symbolic dims 1); a sequence input
// gets one element.
singa::ValueList Inputs(const singa::sonnx::SingaRep& rep) {
  singa::ValueList inputs;
  for (const auto& info : rep.inputs()) {
    singa::Tensor t = singa::cli::GeneratedInput(info, {});
    inputs.push_back(info.sequence ? singa::Value::Sequence({t}, info.dtype) : singa::Value(t));
  }
  return inputs;
}

std::string DataFolder() {
  char name[] = "/tmp/singa-fuzz-data-XXXXXX";
  if (!mkdtemp(name)) std::abort();
  const std::string folder = name;
  std::FILE* f = std::fopen((folder + "/w.bin").c_str(), "wb");
  if (!f) std::abort();
  for (int i = 0; i < 4096; ++i) std::fputc(i * 7 % 251, f);
  std::fclose(f);
  return folder;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  singa::fuzz::SetLimits();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Watchdog& watchdog = *new Watchdog;  // its thread outlives the statics
  static const std::string folder = DataFolder();
  try {
    auto rep = singa::sonnx::PrepareFromBytes(singa::fuzz::Bytes(data, size), singa::Device::Cpu(),
                                              folder);
    const singa::ValueList inputs = Inputs(*rep);
    for (bool plan : {true, true, false}) {
      rep->set_use_plan(plan);
      Watchdog::Armed armed(watchdog, *rep);
      rep->RunValues(inputs);
    }
  } catch (const singa::Error&) {
  } catch (const singa::cli::UsageError&) {
    // An input the model declares without shape or type: `singa run` asks
    // for a file, and so there is nothing to generate.
  }
  return 0;
}
