// Built without MPI (SINGA_MPI=OFF), every process is a world of one rank:
// the collectives apply their compression and send nothing, and a process
// started by an MPI launcher stops with an error naming the option.
#include "singa/dist/communicator.h"

#if SINGA_MPI
#include <dlfcn.h>
#include <mpi.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <numeric>
#include <thread>

#include "singa/core/device.h"
#include "singa/core/dtype.h"
#include "singa/core/error.h"

namespace singa::dist {

namespace {

// A failed or timed-out collective leaves requests no rank will complete:
// MPI_Finalize would then wait for the dead peer, so the exit handler aborts
// the job instead (mpirun then stops every rank).
std::atomic<bool> g_broken{false};

#if SINGA_MPI
void FinalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (g_broken.load()) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Finalize();
}

// Initializes MPI once per process (unless the host program already did).
void EnsureMpi() {
  static std::once_flag once;
  std::call_once(once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) return;
    // Python loads this library with RTLD_LOCAL; Open MPI's plugins resolve
    // symbols of libmpi globally, so it is promoted to RTLD_GLOBAL first.
    for (const char* lib : {"libmpi.so.40", "libmpi.so"})
      if (dlopen(lib, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD)) break;
    int provided = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    SINGA_CHECK(rc == MPI_SUCCESS, Error, "dist: MPI_Init_thread failed (code " << rc << ")");
    std::atexit(FinalizeAtExit);
  });
}

// The float16 sum MPI lacks: each partial sum is formed in float32.
void HalfSum(void* in, void* inout, int* len, MPI_Datatype*) {
  const uint16_t* a = static_cast<const uint16_t*>(in);
  uint16_t* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = Half::FromFloat(Half::ToFloat(a[i]) + Half::ToFloat(b[i]));
}
#endif

double DefaultTimeout() {
  const char* env = std::getenv("SINGA_DIST_TIMEOUT");
  if (env && *env) {
    char* end = nullptr;
    double v = std::strtod(env, &end);
    SINGA_CHECK(
        end && *end == '\0' && v > 0, Error,
        "dist: SINGA_DIST_TIMEOUT must be a positive number of seconds, got '" << env << "'");
    return v;
  }
  return 300;
}

void CheckFloat32(const Tensor& t, const char* what) {
  SINGA_CHECK(t.dtype() == DType::kFloat32, DTypeError,
              "dist " << what << ": tensor " << t.ToString() << " must be float32");
  SINGA_CHECK(t.is_contiguous(), Error,
              "dist " << what << ": tensor " << t.ToString() << " must be contiguous");
  SINGA_CHECK(t.device().type == DeviceType::kCpu, Error,
              "dist " << what << ": tensor on " << t.device().ToString()
                      << "; the MPI communicator works on CPU tensors");
}

// MPI counts are int.
void CheckCount(int64_t n, const char* what) {
  SINGA_CHECK(n <= INT32_MAX, Error,
              "dist " << what << ": " << n << " elements exceed an MPI count (2^31 - 1)");
}

int64_t TotalNumel(const TensorList& ts) {
  int64_t n = 0;
  for (const Tensor& t : ts) n += t.numel();
  return n;
}

void Pack(const TensorList& ts, float* out) {
  for (const Tensor& t : ts) {
    std::memcpy(out, t.raw_data(), t.nbytes());
    out += t.numel();
  }
}

void Unpack(const float* in, const TensorList& ts) {
  for (const Tensor& t : ts) {
    std::memcpy(t.raw_data(), in, t.nbytes());
    in += t.numel();
  }
}

TensorList Detached(const TensorList& ts) {
  TensorList out;
  for (const Tensor& t : ts) out.push_back(t.Detach());
  return out;
}

}  // namespace

bool LaunchedByMpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"})
    if (std::getenv(var)) return true;
  return false;
}

// A started collective: its requests, and what to do once they complete.
struct Inflight {
#if SINGA_MPI
  std::vector<MPI_Request> requests;
#else
  std::vector<int> requests;  // a world of one rank starts no requests
#endif
  std::function<void()> finish;
  std::string what;
};

struct Communicator::State {
#if SINGA_MPI
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Op half_sum = MPI_OP_NULL;
#endif
  int rank = 0, size = 1;
  double timeout = 300;
  std::vector<Inflight> inflight;
  // Statistics (Communicator::bytes_sent, wait_seconds), counted when the
  // collectives run, so a replayed graph step counts too.
  std::atomic<int64_t> bytes_sent{0};
  std::atomic<int64_t> wait_ns{0};

  void Sent(int64_t bytes) { bytes_sent.fetch_add(bytes, std::memory_order_relaxed); }

  [[noreturn]] void Fail(const std::string& what, const std::string& why) {
    g_broken = true;
    inflight.clear();
    throw Error("dist: " + what + " on rank " + std::to_string(rank) + " of " +
                std::to_string(size) + " " + why +
                "; the communicator is broken and the job aborts at exit");
  }

  void EnsureUsable(const char* what) const {
    SINGA_CHECK(!g_broken.load(), Error,
                "dist " << what << ": the communicator is broken by an earlier failure");
  }

#if SINGA_MPI
  void Check(int rc, const std::string& what) {
    if (rc == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    Fail(what, std::string("failed: ") + std::string(msg, len));
  }

  // Polls until `reqs` complete; a peer that died or stopped calling the same
  // collectives would otherwise block this rank forever.
  void WaitRequests(std::vector<MPI_Request>& reqs, const std::string& what) {
    if (reqs.empty()) return;
    const auto start = std::chrono::steady_clock::now();
    for (int polls = 0;; ++polls) {
      int done = 0;
      Check(MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE),
            what);
      if (done) return;
      const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - start;
      if (waited.count() > timeout) {
        Fail(what, "did not complete within " + std::to_string(timeout) +
                       " s (SINGA_DIST_TIMEOUT): a peer rank died or stopped taking part");
      }
      // Spin briefly (the common case finishes in microseconds), then sleep
      // so a long wait does not take a core from the other ranks.
      if (polls < 1000)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
#endif

  // Open MPI advances nonblocking collectives only inside MPI calls: testing
  // the earlier ones when a new one starts lets them progress while
  // backward goes on (the overlap DistOpt's buckets are for).
  void Start(Inflight f) {
#if SINGA_MPI
    for (Inflight& g : inflight) {
      if (g.requests.empty()) continue;
      int done = 0;
      Check(MPI_Testall(static_cast<int>(g.requests.size()), g.requests.data(), &done,
                        MPI_STATUSES_IGNORE),
            g.what);
    }
#endif
    inflight.push_back(std::move(f));
  }

  void WaitAll() {
    const auto start = std::chrono::steady_clock::now();
#if SINGA_MPI
    for (Inflight& f : inflight) WaitRequests(f.requests, f.what);
#endif
    std::vector<Inflight> done = std::move(inflight);
    inflight.clear();
    for (Inflight& f : done) f.finish();
    wait_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count(),
                      std::memory_order_relaxed);
  }
};

Communicator::Communicator() : Communicator(Options{}) {}

Communicator::Communicator(Options o) : opts_(o), state_(std::make_shared<State>()) {
  SINGA_CHECK(opts_.buff_size > 0, Error,
              "dist Communicator: buffSize must be positive, got " << opts_.buff_size);
  if (opts_.timeout_seconds <= 0) opts_.timeout_seconds = DefaultTimeout();
  state_->timeout = opts_.timeout_seconds;
  if (!LaunchedByMpi()) return;  // one process: world size 1, no MPI
#if SINGA_MPI
  EnsureMpi();
  State& s = *state_;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  s.Check(MPI_Comm_dup(MPI_COMM_WORLD, &s.comm), "MPI_Comm_dup");
  s.Check(MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  s.Check(MPI_Comm_rank(s.comm, &s.rank), "MPI_Comm_rank");
  s.Check(MPI_Comm_size(s.comm, &s.size), "MPI_Comm_size");
  MPI_Comm local = MPI_COMM_NULL;
  s.Check(MPI_Comm_split_type(s.comm, MPI_COMM_TYPE_SHARED, s.rank, MPI_INFO_NULL, &local),
          "MPI_Comm_split_type");
  s.Check(MPI_Comm_rank(local, &local_rank_), "MPI_Comm_rank");
  MPI_Comm_free(&local);
  s.Check(MPI_Op_create(&HalfSum, 1, &s.half_sum), "MPI_Op_create");
  rank_ = s.rank;
  world_size_ = s.size;
#else
  throw Error(
      "dist Communicator: singa was built without MPI (SINGA_MPI=OFF), but this process was "
      "started by an MPI launcher; run it as one process, or rebuild singa with -DSINGA_MPI=ON "
      "(an MPI such as Open MPI installed)");
#endif
}

Communicator::~Communicator() {
#if SINGA_MPI
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || g_broken.load() || state_->comm == MPI_COMM_NULL) return;
  MPI_Op_free(&state_->half_sum);
  MPI_Comm_free(&state_->comm);
#endif
}

bool Communicator::broken() const { return g_broken.load(); }

int64_t Communicator::bytes_sent() const { return state_->bytes_sent.load(); }

double Communicator::wait_seconds() const {
  return 1e-9 * static_cast<double>(state_->wait_ns.load());
}

void Communicator::ResetStats() {
  state_->bytes_sent = 0;
  state_->wait_ns = 0;
}

void Communicator::AllReduce(const Tensor& t) {
  CheckFloat32(t, "AllReduce");
  state_->EnsureUsable("AllReduce");
  if (t.empty()) return;
  CheckCount(t.numel(), "AllReduce");
  Tensor d = t.Detach();
  t.device().Exec(
      [s = state_, d] {
        if (s->size == 1) return;  // the average of one rank is its own value
#if SINGA_MPI
        Inflight f{{MPI_REQUEST_NULL}, {}, "AllReduce"};
        float* p = static_cast<float*>(d.raw_data());
        const int n = static_cast<int>(d.numel());
        s->Check(MPI_Iallreduce(MPI_IN_PLACE, p, n, MPI_FLOAT, MPI_SUM, s->comm, &f.requests[0]),
                 "MPI_Iallreduce");
        s->Sent(int64_t{n} * 4);
        f.finish = [p, n, scale = 1.0f / static_cast<float>(s->size)] {
          for (int i = 0; i < n; ++i) p[i] *= scale;
        };
        s->Start(std::move(f));
#endif
      },
      {}, std::span(&d, 1));
  started_.push_back(d);
}

void Communicator::AllReduceHalf(const Tensor& t) { FusedAllReduceHalf({t}, true); }

void Communicator::FusedAllReduce(const TensorList& ts, bool send) {
  for (const Tensor& t : ts) {
    CheckFloat32(t, "FusedAllReduce");
    if (pending_numel_[0] > 0 && pending_numel_[0] + t.numel() > opts_.buff_size) Flush(false);
    pending_[0].push_back(t.Detach());
    pending_numel_[0] += t.numel();
  }
  if (send) Flush(false);
}

void Communicator::FusedAllReduceHalf(const TensorList& ts, bool send) {
  for (const Tensor& t : ts) {
    CheckFloat32(t, "AllReduceHalf");
    if (pending_numel_[1] > 0 && pending_numel_[1] + t.numel() > opts_.buff_size) Flush(true);
    pending_[1].push_back(t.Detach());
    pending_numel_[1] += t.numel();
  }
  if (send) Flush(true);
}

void Communicator::Flush(bool half) {
  TensorList ts = std::exchange(pending_[half], {});
  const int64_t n = std::exchange(pending_numel_[half], 0);
  if (n == 0) return;
  CheckCount(n, half ? "AllReduceHalf" : "FusedAllReduce");
  state_->EnsureUsable(half ? "AllReduceHalf" : "FusedAllReduce");
  Device dev = ts[0].device();
  if (!half) {
    dev.Exec(
        [s = state_, ts, n] {
          if (s->size == 1) return;
#if SINGA_MPI
          auto buf = std::make_shared<std::vector<float>>(n);
          Pack(ts, buf->data());
          Inflight f{{MPI_REQUEST_NULL}, {}, "FusedAllReduce"};
          s->Check(MPI_Iallreduce(MPI_IN_PLACE, buf->data(), static_cast<int>(n), MPI_FLOAT,
                                  MPI_SUM, s->comm, &f.requests[0]),
                   "MPI_Iallreduce");
          s->Sent(n * 4);
          f.finish = [buf, ts, scale = 1.0f / static_cast<float>(s->size)] {
            for (float& v : *buf) v *= scale;
            Unpack(buf->data(), ts);
          };
          s->Start(std::move(f));
#endif
        },
        ts, {});
  } else {
    // Each rank sends its share (value / world size) so the sum is the
    // average and stays in float16 range as long as the values do.
    dev.Exec(
        [s = state_, ts, n] {
          auto buf = std::make_shared<std::vector<uint16_t>>(n);
          const float scale = 1.0f / static_cast<float>(s->size);
          uint16_t* out = buf->data();
          for (const Tensor& t : ts) {
            const float* p = static_cast<const float*>(t.raw_data());
            for (int64_t i = 0; i < t.numel(); ++i) *out++ = Half::FromFloat(p[i] * scale);
          }
          Inflight f{{}, {}, "AllReduceHalf"};
#if SINGA_MPI
          if (s->size > 1) {
            f.requests.push_back(MPI_REQUEST_NULL);
            s->Check(MPI_Iallreduce(MPI_IN_PLACE, buf->data(), static_cast<int>(n), MPI_UINT16_T,
                                    s->half_sum, s->comm, &f.requests[0]),
                     "MPI_Iallreduce (float16)");
            s->Sent(n * 2);
          }
#endif
          f.finish = [buf, ts] {
            const uint16_t* in = buf->data();
            for (const Tensor& t : ts) {
              float* p = static_cast<float*>(t.raw_data());
              for (int64_t i = 0; i < t.numel(); ++i) p[i] = Half::ToFloat(*in++);
            }
          };
          s->Start(std::move(f));
        },
        ts, {});
  }
  started_.insert(started_.end(), ts.begin(), ts.end());
}

void Communicator::SparseAllReduce(const TensorList& ts, const TensorList& residuals, float spars,
                                   bool topK) {
  SINGA_CHECK(
      ts.size() == residuals.size(), Error,
      "dist SparseAllReduce: " << ts.size() << " tensors but " << residuals.size() << " residuals");
  SINGA_CHECK(std::isfinite(spars) && spars >= 0 && (!topK || (spars > 0 && spars <= 1)), Error,
              "dist SparseAllReduce: spars must be in (0, 1] with topK (the fraction kept) or >= "
              "0 without (the magnitude threshold), got "
                  << spars);
  for (size_t i = 0; i < ts.size(); ++i) {
    CheckFloat32(ts[i], "SparseAllReduce");
    CheckFloat32(residuals[i], "SparseAllReduce (residual)");
    SINGA_CHECK(ts[i].shape() == residuals[i].shape(), ShapeError,
                "dist SparseAllReduce: tensor " << ts[i].ToString() << " and its residual "
                                                << residuals[i].ToString() << " differ in shape");
  }
  state_->EnsureUsable("SparseAllReduce");
  const int64_t n = TotalNumel(ts);
  if (n == 0) return;
  CheckCount(n, "SparseAllReduce");
  TensorList t = Detached(ts), r = Detached(residuals);
  ts[0].device().Exec(
      [s = state_, t, r, n, spars, topK] {
        // acc = gradient + residual; the kept entries travel as
        // (index, float bits) pairs, the rest stays in the residual.
        std::vector<float> acc(n), res(n);
        Pack(t, acc.data());
        Pack(r, res.data());
        for (int64_t i = 0; i < n; ++i) acc[i] += res[i];
        std::vector<uint32_t> keep;
        if (topK) {
          const int64_t k = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(spars * n)), 1, n);
          std::vector<uint32_t> idx(n);
          std::iota(idx.begin(), idx.end(), 0u);
          std::nth_element(idx.begin(), idx.begin() + (k - 1), idx.end(),
                           [&](uint32_t a, uint32_t b) {
                             const float fa = std::fabs(acc[a]), fb = std::fabs(acc[b]);
                             return fa > fb || (fa == fb && a < b);
                           });
          keep.assign(idx.begin(), idx.begin() + k);
        } else {
          for (int64_t i = 0; i < n; ++i)
            if (std::fabs(acc[i]) >= spars) keep.push_back(static_cast<uint32_t>(i));
        }
        auto pairs = std::make_shared<std::vector<uint32_t>>();
        pairs->reserve(2 * keep.size());
        for (uint32_t i : keep) {
          uint32_t bits;
          std::memcpy(&bits, &acc[i], 4);
          pairs->push_back(i);
          pairs->push_back(bits);
          acc[i] = 0;
        }
        Unpack(acc.data(), r);  // what was not sent
        Inflight f{{}, {}, "SparseAllReduce"};
        auto all = std::make_shared<std::vector<uint32_t>>();
        if (s->size == 1) {
          *all = *pairs;
        } else {
#if SINGA_MPI
          // Threshold selection keeps a different count on each rank, so
          // the counts travel first.
          const int mine = static_cast<int>(pairs->size());
          std::vector<int> counts(s->size), displs(s->size);
          std::vector<MPI_Request> req{MPI_REQUEST_NULL};
          s->Check(MPI_Iallgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, s->comm, &req[0]),
                   "MPI_Iallgather (sparse counts)");
          s->Sent(4);
          s->WaitRequests(req, "SparseAllReduce (counts)");
          int64_t total = 0;
          for (int i = 0; i < s->size; ++i) {
            displs[i] = static_cast<int>(total);
            total += counts[i];
          }
          SINGA_CHECK(total <= INT32_MAX, Error,
                      "dist SparseAllReduce: " << total / 2 << " pairs exceed an MPI count");
          all->resize(total);
          f.requests.push_back(MPI_REQUEST_NULL);
          s->Check(MPI_Iallgatherv(pairs->data(), mine, MPI_UINT32_T, all->data(), counts.data(),
                                   displs.data(), MPI_UINT32_T, s->comm, &f.requests[0]),
                   "MPI_Iallgatherv (sparse pairs)");
          s->Sent(int64_t{mine} * 4);
#endif
        }
        f.finish = [pairs, all, t, n, scale = 1.0f / static_cast<float>(s->size)] {
          std::vector<float> sum(n, 0.0f);
          for (size_t j = 0; j + 1 < all->size(); j += 2) {
            float v;
            std::memcpy(&v, &(*all)[j + 1], 4);
            sum[(*all)[j]] += v;
          }
          for (float& v : sum) v *= scale;
          Unpack(sum.data(), t);
        };
        s->Start(std::move(f));
      },
      [&] {
        TensorList reads = t;
        reads.insert(reads.end(), r.begin(), r.end());
        return reads;
      }(),
      r);
  started_.insert(started_.end(), t.begin(), t.end());
}

void Communicator::Broadcast(const Tensor& t, int root) {
  CheckFloat32(t, "Broadcast");
  SINGA_CHECK(root >= 0 && root < world_size_, Error,
              "dist Broadcast: root " << root << " is not a rank of " << world_size_);
  state_->EnsureUsable("Broadcast");
  if (t.empty()) return;
  CheckCount(t.numel(), "Broadcast");
  Tensor d = t.Detach();
  t.device().Exec(
      [s = state_, d, root] {
        if (s->size == 1) return;
#if SINGA_MPI
        std::vector<MPI_Request> req{MPI_REQUEST_NULL};
        s->Check(MPI_Ibcast(d.raw_data(), static_cast<int>(d.numel()), MPI_FLOAT, root, s->comm,
                            &req[0]),
                 "MPI_Ibcast");
        if (s->rank == root) s->Sent(d.numel() * 4);
        s->WaitRequests(req, "Broadcast");
#endif
      },
      {}, std::span(&d, 1));
}

void Communicator::Wait() {
  Flush(false);
  Flush(true);
  if (started_.empty()) return;
  TensorList writes = std::exchange(started_, {});
  writes[0].device().Exec([s = state_] { s->WaitAll(); }, {}, writes);
}

}  // namespace singa::dist
