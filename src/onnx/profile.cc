// Profiles of runs (SingaRep::Profile): the node walk's timer and the
// Chrome trace a profile is written as.
#include "singa/core/profile.h"

#include <cstdio>
#include <optional>

#include "onnx/plan.h"
#include "singa/core/json.h"

namespace singa::sonnx {

using Clock = std::chrono::steady_clock;

namespace {
double Microseconds(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}
}  // namespace

struct NodeTimer::State {
  Clock::time_point start = Clock::now(), node_start;
  std::optional<KernelLog> kernels;
  // The GPU the node's tensors are on: a GPU runs its kernels after the
  // launch returns, so the node's time is from its inputs being ready to
  // its kernels being done (each node waits for the one before).
  std::optional<Device> gpu;
};

NodeTimer::NodeTimer(const Graph& g, std::vector<NodeProfile>& nodes)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  hook_.before = [&g, &nodes, &s](int i, const ValueList& in) {
    const Node& node = g.nodes[i];
    NodeProfile p{node.op_type, node.name};
    s.gpu.reset();
    for (const Value& v : in) {
      p.inputs.push_back(v.ToString());
      if (!v.is_sequence() && v.tensor().defined() && v.tensor().device().type == DeviceType::kCuda)
        s.gpu = v.tensor().device();
    }
    nodes.push_back(std::move(p));
    s.kernels.emplace();
    if (s.gpu) s.gpu->Sync();
    s.node_start = Clock::now();
  };
  hook_.after = [&nodes, &s](int) {
    if (s.gpu) s.gpu->Sync();
    const auto end = Clock::now();
    NodeProfile& p = nodes.back();
    p.start_us = Microseconds(s.node_start - s.start);
    p.duration_us = Microseconds(end - s.node_start);
    p.kernels = s.kernels->names();
    s.kernels.reset();
  };
}

NodeTimer::~NodeTimer() = default;

ProfileClock::ProfileClock(RunProfile* profile) : profile_(profile), start_(Clock::now()) {}
ProfileClock::~ProfileClock() {
  if (profile_) profile_->duration_us = Microseconds(Clock::now() - start_);
}

std::string RunProfile::TraceEvents(int row) const {
  // Complete ("X") events in microseconds, as onnxruntime's profiler writes
  // them: the run, then its nodes.
  auto event = [row](const std::string& cat, const std::string& name, double ts, double dur,
                     const std::string& args) {
    char fields[128];
    std::snprintf(fields, sizeof(fields),
                  ",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f", row, ts, dur);
    return "{\"cat\":" + JsonString(cat) + ",\"name\":" + JsonString(name) + fields +
           ",\"args\":{" + args + "}}";
  };
  auto list = [](const std::vector<std::string>& items) {
    std::string s = "[";
    for (size_t i = 0; i < items.size(); ++i) s += (i ? "," : "") + JsonString(items[i]);
    return s + "]";
  };
  std::string out = event("Session", "model_run", 0, duration_us,
                          std::string("\"planned\":") + (planned ? "true" : "false") +
                              ",\"replayed\":" + (replayed ? "true" : "false"));
  for (const NodeProfile& n : nodes)
    out += ",\n" + event("Node", n.name, n.start_us, n.duration_us,
                         "\"op_name\":" + JsonString(n.op_type) + ",\"inputs\":" + list(n.inputs) +
                             ",\"kernels\":" + list(n.kernels));
  return out;
}

std::string RunProfile::ChromeTrace() const { return "[\n" + TraceEvents() + "\n]\n"; }

}  // namespace singa::sonnx
