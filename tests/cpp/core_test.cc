// Core engine: Tensor views, dtype conversions, MemPool, Device, registry errors.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "singa/core/parallel.h"
#include "singa/core/tensor.h"
#include "singa/ops/op.h"

namespace singa {
namespace {

TEST(Tensor, ViewsShareStorage) {
  Tensor x = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor xt = x.Permute({1, 0});
  EXPECT_FALSE(xt.is_contiguous());
  EXPECT_EQ(xt.block(), x.block());
  EXPECT_EQ(xt.At<float>({2, 1}), 6.f);
  Tensor c = xt.Contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_NE(c.block(), x.block());
  EXPECT_EQ(c.ToVector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(x.Contiguous().block(), x.block());  // no copy when already dense
}

TEST(Tensor, ReshapeViewsOrCopies) {
  Tensor x = Tensor::FromVector<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor r = x.Reshape({3, -1});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(r.block(), x.block());
  Tensor rt = x.Transpose().Reshape({6});  // not expressible as a view
  EXPECT_NE(rt.block(), x.block());
  EXPECT_EQ(rt.ToVector<int32_t>(), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_THROW(x.Reshape({4, -1}), ShapeError);
  EXPECT_THROW(x.Reshape({-1, -1}), ShapeError);
}

TEST(Tensor, SliceLikePython) {
  Tensor x = Tensor::FromVector<int64_t>({6}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(x.Slice(0, 1, 5, 2).ToVector<int64_t>(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(x.Slice(0, -1, -7, -1).ToVector<int64_t>(), (std::vector<int64_t>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(x.Slice(0, 4, 100, 1).ToVector<int64_t>(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(x.Slice(0, 3, 3).numel(), 0);
  EXPECT_EQ(x.Slice(0, 5, 0, -2).ToVector<int64_t>(), (std::vector<int64_t>{5, 3, 1}));
  EXPECT_THROW(x.Slice(0, 0, 1, 0), ShapeError);
}

TEST(Tensor, BroadcastSqueezeUnsqueeze) {
  Tensor x = Tensor::FromVector<float>({3, 1}, {1, 2, 3});
  Tensor b = x.BroadcastTo({2, 3, 4});
  EXPECT_EQ(b.strides(), (Strides{0, 1, 0}));
  EXPECT_EQ(b.At<float>({1, 2, 3}), 3.f);
  EXPECT_EQ(b.Contiguous().numel(), 24);
  EXPECT_THROW(x.BroadcastTo({2, 4}), ShapeError);
  EXPECT_EQ(x.Squeeze(1).shape(), (Shape{3}));
  EXPECT_THROW(x.Squeeze(0), ShapeError);
  EXPECT_EQ(x.Unsqueeze(0).shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(x.Unsqueeze(-1).shape(), (Shape{3, 1, 1}));
}

TEST(Tensor, ScalarsAndEmpty) {
  Tensor s = Tensor::Scalar<double>(2.5);
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.Item<double>(), 2.5);
  Tensor e = Tensor::Zeros({0, 4});
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(e.Clone().shape(), (Shape{0, 4}));
  EXPECT_EQ(e.Transpose().Contiguous().shape(), (Shape{4, 0}));
  Tensor y = Call1("Add", {e, Tensor::Ones({4})});
  EXPECT_EQ(y.shape(), (Shape{0, 4}));
  EXPECT_THROW(Tensor({2, -1}), ShapeError);
}

TEST(Tensor, AsTypeConverts) {
  Tensor x = Tensor::FromVector<float>({4}, {-1.5f, 0.f, 2.f, 3.75f});
  EXPECT_EQ(x.AsType(DType::kInt32).ToVector<int32_t>(), (std::vector<int32_t>{-1, 0, 2, 3}));
  EXPECT_EQ(x.AsType(DType::kBool).ToVector<bool>(), (std::vector<bool>{true, false, true, true}));
  EXPECT_EQ(x.AsType(DType::kFloat16).ToVector<float>(), x.ToVector<float>());
  EXPECT_EQ(x.AsType(DType::kBFloat16).ToVector<float>(), x.ToVector<float>());
  Tensor s = x.AsType(DType::kString);
  EXPECT_EQ(s.At<std::string>({3}), "3.75");
  EXPECT_EQ(s.AsType(DType::kFloat32).ToVector<float>(), x.ToVector<float>());
}

TEST(DType, NamesRoundTrip) {
  for (int i = 1; i < kNumDTypes; ++i) {
    auto dt = static_cast<DType>(i);
    EXPECT_EQ(DTypeFromName(Name(dt)), dt);
  }
  EXPECT_THROW(DTypeFromName("float128"), DTypeError);
}

// The enumerators are ONNX's TensorProto.DataType codes; sub-byte types take
// one byte in memory.
TEST(DType, CodesNamesAndSizesOfTheNewestTypes) {
  struct Row {
    DType dt;
    int code;
    const char* name;
  };
  for (const Row& r :
       {Row{DType::kFloat8E4M3FN, 17, "float8e4m3fn"}, Row{DType::kUInt4, 21, "uint4"},
        Row{DType::kInt4, 22, "int4"}, Row{DType::kFloat4E2M1, 23, "float4e2m1"},
        Row{DType::kFloat8E8M0, 24, "float8e8m0"}, Row{DType::kUInt2, 25, "uint2"},
        Row{DType::kInt2, 26, "int2"}}) {
    EXPECT_EQ(static_cast<int>(r.dt), r.code) << r.name;
    EXPECT_EQ(Name(r.dt), r.name);
    EXPECT_EQ(SizeOf(r.dt), 1u) << r.name;
    EXPECT_FALSE(IsComputable(r.dt)) << r.name;
  }
  EXPECT_EQ(kNumDTypes, 27);
  EXPECT_THROW(Name(static_cast<DType>(kNumDTypes)), DTypeError);
}

// Cast into and out of int2/uint2 (low two bits kept) and float8e8m0 (powers
// of two; round_mode decides between neighbours).
TEST(DType, SubByteAndE8M0CastsRoundTrip) {
  Tensor x = Tensor::FromVector<float>({6}, {-3.f, -2.f, -1.f, 0.f, 1.f, 2.f});
  Tensor i2 = Call1("Cast", {x}, {{"to", int64_t{26}}});
  EXPECT_EQ(i2.dtype(), DType::kInt2);
  EXPECT_EQ(Call1("Cast", {i2}, {{"to", int64_t{1}}}).ToVector<float>(),
            (std::vector<float>{1, -2, -1, 0, 1, -2}));
  Tensor u2 = Call1("Cast", {x}, {{"to", int64_t{25}}});
  EXPECT_EQ(Call1("Cast", {u2}, {{"to", int64_t{1}}}).ToVector<float>(),
            (std::vector<float>{1, 2, 3, 0, 1, 2}));
  Tensor v = Tensor::FromVector<float>({5}, {0.3f, 0.375f, 1.f, 3e38f, NAN});
  auto e8m0 = [&](const char* mode, bool saturate) {
    Tensor e = Call1(
        "Cast", {v},
        {{"to", int64_t{24}}, {"round_mode", std::string(mode)}, {"saturate", int64_t{saturate}}});
    EXPECT_EQ(e.dtype(), DType::kFloat8E8M0);
    return Call1("Cast", {e}, {{"to", int64_t{1}}}).ToVector<float>();
  };
  const float big = std::ldexp(1.f, 127);
  std::vector<float> up = e8m0("up", true), down = e8m0("down", true), near = e8m0("nearest", true);
  EXPECT_EQ(std::vector<float>(up.begin(), up.end() - 1), (std::vector<float>{0.5f, 0.5f, 1, big}));
  EXPECT_EQ(std::vector<float>(down.begin(), down.end() - 1),
            (std::vector<float>{0.25f, 0.25f, 1, big}));
  EXPECT_EQ(std::vector<float>(near.begin(), near.end() - 1),
            (std::vector<float>{0.25f, 0.5f, 1, big}));
  EXPECT_TRUE(std::isnan(up.back()));
  EXPECT_TRUE(std::isnan(e8m0("up", false)[3]));  // past the largest exponent
}

TEST(DType, HalfRoundTripsEveryBitPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = Half::ToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(Half::FromFloat(f), h) << "half bits " << h;
  }
}

TEST(DType, HalfRoundsToNearestEven) {
  EXPECT_EQ(static_cast<float>(Half(1.0f + 1.0f / 2048)), 1.0f);  // tie -> even
  EXPECT_EQ(static_cast<float>(Half(1.0f + 3.0f / 2048)), 1.0f + 2.0f / 1024);
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(70000.f))));
  EXPECT_EQ(static_cast<float>(Half(5.96e-8f)), 5.960464477539063e-8f);  // smallest subnormal
  EXPECT_EQ(static_cast<float>(BFloat16(1.00390625f)), 1.0f);            // tie -> even
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(NAN))));
}

TEST(MemPool, CachesAndCounts) {
  MemPool pool;
  void* p = pool.Malloc(1000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % MemPool::kAlignment, 0u);
  EXPECT_EQ(pool.stats().current_bytes, static_cast<int64_t>(MemPool::RoundSize(1000)));
  pool.Free(p, 1000);
  EXPECT_EQ(pool.stats().current_bytes, 0);
  EXPECT_GT(pool.stats().cached_bytes, 0);
  void* q = pool.Malloc(1000);
  EXPECT_EQ(p, q);  // served from the cache
  EXPECT_EQ(pool.stats().num_os_allocs, 1);
  pool.Free(q, 1000);
  pool.EmptyCache();
  EXPECT_EQ(pool.stats().cached_bytes, 0);
  EXPECT_GE(pool.stats().peak_bytes, 1000);
  void* z = pool.Malloc(0);
  EXPECT_NE(z, nullptr);
  pool.Free(z, 0);
}

TEST(MemPool, ATemporariesScopeReturnsOnlyItsOwnTemporariesToTheOs) {
  MemPool pool;
  constexpr size_t kBig = size_t{1} << 20;
  void* cached = pool.Malloc(kBig);
  void* before = pool.Malloc(2 * kBig);
  pool.Free(cached, kBig);
  void* kept = nullptr;
  {
    MemPool::TemporariesScope scope(pool);
    void* reused = pool.Malloc(kBig);
    EXPECT_EQ(reused, cached);  // what was cached before is handed out
    pool.Free(reused, kBig);
    EXPECT_EQ(pool.stats().cached_bytes, 0);  // a temporary goes back to the OS
    pool.Free(before, 2 * kBig);              // a block from before is cached
    EXPECT_EQ(pool.stats().cached_bytes, static_cast<int64_t>(MemPool::RoundSize(2 * kBig)));
    {
      MemPool::TemporariesScope nested(pool);
      kept = pool.Malloc(4 * kBig);
    }
    void* temporary = pool.Malloc(8 * kBig);
    pool.Free(temporary, 8 * kBig);
    EXPECT_EQ(pool.stats().cached_bytes, static_cast<int64_t>(MemPool::RoundSize(2 * kBig)));
  }
  EXPECT_EQ(pool.stats().cached_bytes, 0);  // what the scope did not reuse went back
  pool.Free(kept, 4 * kBig);                // it outlived the scopes: cached
  EXPECT_EQ(pool.stats().cached_bytes, static_cast<int64_t>(MemPool::RoundSize(4 * kBig)));
  EXPECT_EQ(pool.stats().num_os_allocs, 4);  // cached, before, kept, temporary
}

TEST(MemPool, SizeClassesBoundWaste) {
  for (size_t n : {1ul, 63ul, 64ul, 4097ul, 100000ul, 123456789ul}) {
    size_t r = MemPool::RoundSize(n);
    EXPECT_GE(r, n);
    EXPECT_LE(r, std::max<size_t>(64, n + n / 8 + 64));
  }
}

TEST(MemPool, LimitsBoundTheGrowthOfMemoryInUse) {
  MemPool pool;
  void* kept = pool.Malloc(4096);
  {
    MemoryLimit limit(pool, 8192);  // counts from the 4096 in use now
    void* a = pool.Malloc(8192);
    EXPECT_THROW(pool.Malloc(64), MemoryError);
    pool.Free(a, 8192);
    void* b = pool.Malloc(4096);  // room again once freed
    {
      MemoryLimit inner(pool, 1024);  // nested: both apply
      EXPECT_THROW(pool.Malloc(2048), MemoryError);
      pool.Free(pool.Malloc(1024), 1024);
    }
    EXPECT_THROW(pool.Malloc(8192), MemoryError);
    pool.Free(b, 4096);
    MemPool other;  // a limit binds its own pool only
    other.Free(other.Malloc(1 << 20), 1 << 20);
  }
  void* big = pool.Malloc(1 << 20);  // no limit once the scope ends
  EXPECT_EQ(pool.stats().current_bytes, (1 << 20) + 4096);
  pool.Free(big, 1 << 20);
  pool.Free(kept, 4096);
}

TEST(MemPool, TensorsReturnMemory) {
  MemPool& pool = Device::Cpu().mem_pool();
  int64_t before = pool.stats().current_bytes;
  {
    Tensor t({1024, 1024});
    t.Fill(1);
    EXPECT_GE(pool.stats().current_bytes, before + 4 * 1024 * 1024);
  }
  EXPECT_EQ(pool.stats().current_bytes, before);
}

TEST(MemPool, ThreadsRacingToALazyBlockShareOneAllocation) {
  // A block is allocated on its first data(): threads that reach it at once
  // (the directions of a bidirectional recurrent layer, each writing its
  // half of one output) must all write the same memory, and the losers'
  // allocations go back to the pool.
  MemPool& pool = Device::Cpu().mem_pool();
  const int64_t before = pool.stats().current_bytes;
  const int n = 4;
  for (int round = 0; round < 200; ++round) {
    Tensor t({n, 256});
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
      threads.emplace_back([&, i] {
        ready.fetch_add(1);
        while (ready.load() < n) std::this_thread::yield();
        std::fill_n(t.data<float>() + i * 256, 256, static_cast<float>(i));
      });
    for (auto& th : threads) th.join();
    const std::vector<float> v = t.ToVector<float>();
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(std::count(v.begin() + i * 256, v.begin() + (i + 1) * 256, float(i)), 256)
          << "round " << round << ", thread " << i << "'s writes were lost";
  }
  EXPECT_EQ(pool.stats().current_bytes, before);
}

TEST(Device, GraphCaptureAndReplay) {
  Device cpu = Device::Cpu();
  Tensor a = Tensor::FromVector<float>({2}, {1, 2});
  Tensor b = Tensor::FromVector<float>({2}, {10, 20});
  cpu.EnableGraph(true);
  Tensor y = Call1("Add", {a, b});
  cpu.EnableGraph(false);
  EXPECT_EQ(cpu.graph_size(), 1u);
  cpu.RunGraph();
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{11, 22}));
  a.Fill(5);
  cpu.RunGraph();  // replays on the new values
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{15, 25}));
  cpu.ResetGraph();
  EXPECT_EQ(cpu.graph_size(), 0u);
}

TEST(Device, AReplayedResultsMemoryIsTakenAndTheNextReplayAllocatesAfresh) {
  Device cpu = Device::Cpu();
  Tensor a = Tensor::FromVector<float>({2}, {1, 2});
  cpu.EnableGraph(true);
  Tensor y = Call1("Add", {a, a});
  cpu.EnableGraph(false);
  const Tensor keep[] = {y};
  cpu.PlanGraphMemory(keep);
  cpu.RunGraph();
  const void* first = y.raw_data();
  const std::shared_ptr<Block> taken = y.block()->TakeMemory();
  EXPECT_EQ(taken->data(), first);
  EXPECT_FALSE(y.block()->allocated());
  a.CopyFrom(Tensor::FromVector<float>({2}, {5, 6}));
  cpu.RunGraph();
  EXPECT_NE(y.raw_data(), first);
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{10, 12}));
  EXPECT_EQ(static_cast<const float*>(taken->data())[1], 4.f);
  // Memory a block does not hold from the pool is not its to give.
  float outside[2] = {};
  Tensor wrapped = Tensor::Wrap(outside, DType::kFloat32, {2}, {1}, nullptr);
  EXPECT_THROW(wrapped.block()->TakeMemory(), Error);
  const std::shared_ptr<Block> second = y.block()->TakeMemory();
  EXPECT_THROW(y.block()->TakeMemory(), Error);  // nothing left to take
  cpu.ResetGraph();
}

TEST(Device, ARecordingMovedToAnotherArenaReplaysThere) {
  Device cpu = Device::Cpu();
  Tensor a = Tensor::FromVector<float>({2}, {1, 2});
  Tensor b = Tensor::FromVector<float>({2}, {10, 20});
  cpu.EnableGraph(true);
  Tensor t = Call1("Add", {a, b});  // an intermediate: placed in the arena
  Tensor y = Call1("Mul", {t, a});
  cpu.EnableGraph(false);
  SharedArena first;
  ArenaPlacement placement;
  const Tensor keep[] = {y};
  ASSERT_GT(cpu.PlanGraphMemory(keep, &first, {}, &placement), 0u);
  ASSERT_EQ(placement.size(), 1u);
  EXPECT_EQ(placement[0].first, t.block().get());
  EXPECT_EQ(t.raw_data(), static_cast<char*>(first.memory.get()) + placement[0].second);
  // A larger arena: the block moves there, and the old one can go.
  SharedArena second{
      std::shared_ptr<void>(new char[4 * first.bytes], std::default_delete<char[]>()),
      4 * first.bytes};
  const uint64_t version = t.block()->version();
  for (auto [block, offset] : placement)
    block->Move(static_cast<char*>(second.memory.get()) + offset, second.memory);
  EXPECT_NE(t.block()->version(), version);
  std::weak_ptr<void> old = first.memory;
  first = {};
  EXPECT_TRUE(old.expired());
  EXPECT_EQ(t.raw_data(), static_cast<char*>(second.memory.get()) + placement[0].second);
  cpu.RunGraph();
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{11, 44}));
  EXPECT_THROW(a.block()->Move(second.memory.get(), second.memory), Error);  // not placed
  cpu.ResetGraph();
}

TEST(Parallel, CoversRangeOnce) {
  std::vector<int> hits(100000);
  ParallelFor(0, 100000, 1000, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) hits[i]++;
  });
  for (int h : hits) ASSERT_EQ(h, 1);
  int n = GetNumThreads();
  SetNumThreads(1);
  EXPECT_EQ(GetNumThreads(), 1);
  SetNumThreads(n);
}

TEST(Parallel, SerialScopeRunsOnTheCallingThreadAndRestores) {
  const int n = GetNumThreads();
  SetNumThreads(2);
  {
    SerialScope serial;
    EXPECT_EQ(ActiveThreads(), 1);
    EXPECT_EQ(omp_get_max_threads(), 1);  // oneDNN's primitives see one thread
    {
      SerialScope inactive(false);
      EXPECT_EQ(ActiveThreads(), 1);
    }
    std::set<std::thread::id> ids;
    std::mutex mu;
    ParallelFor(0, 1 << 20, 1, [&](int64_t, int64_t) {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    });
    EXPECT_EQ(ids, std::set<std::thread::id>{std::this_thread::get_id()});
    EXPECT_EQ(GetNumThreads(), 2);  // the setting itself is unchanged
  }
  EXPECT_EQ(omp_get_max_threads(), 2);
  SetNumThreads(n);
}

// Threads that spin on every core, twice over, for the test's duration.
class BusyLoops {
 public:
  BusyLoops() {
    for (unsigned i = 0; i < 2 * std::max(1u, std::thread::hardware_concurrency()); ++i)
      threads_.emplace_back([this] {
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
  }
  ~BusyLoops() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// Polls CpuContended() for up to 5 s until it reads `want`.
bool Becomes(bool want) {
  for (int i = 0; i < 100; ++i) {
    if (CpuContended() == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(Parallel, OpsRunSeriallyWhileOtherWorkKeepsTheCoresBusy) {
  if (!std::ifstream("/proc/pressure/cpu")) GTEST_SKIP() << "the kernel reports no CPU pressure";
  // Other tests may run beside this one (ctest -j): they can keep the
  // machine busy before or after the busy loops, not during them.
  if (!Becomes(false)) GTEST_SKIP() << "other work keeps the machine busy";
  {
    BusyLoops busy;
    ASSERT_TRUE(Becomes(true));
    EXPECT_EQ(ActiveThreads(), 1);
  }
  if (!Becomes(false)) GTEST_SKIP() << "other work kept the machine busy after the busy loops";
  EXPECT_EQ(ActiveThreads(), GetNumThreads());
}

TEST(Registry, ErrorsNameTheOp) {
  Tensor a = Tensor::Ones({2, 3});
  try {
    CallOp("Add", {a, Tensor::Ones({4})});
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("Add"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("[2,3]"), std::string::npos);
  }
  EXPECT_THROW(CallOp("Add", {a, Tensor::Ones({2, 3}, DType::kFloat64)}), DTypeError);
  EXPECT_THROW(CallOp("Add", {a, a}, {{"alpha", 1.0f}}), InvalidModel);
  EXPECT_THROW(CallOp("NoSuchOp", {a}), UnsupportedOp);
  EXPECT_THROW(CallOp("Mish", {a}, {}, 17), UnsupportedOp);  // Mish arrived in opset 18
  EXPECT_EQ(OpRegistry::Find("Add", 13)->since_version, 7);
}

}  // namespace
}  // namespace singa
