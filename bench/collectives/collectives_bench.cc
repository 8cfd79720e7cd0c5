// In-process collectives (runtime/in_process_communicator.h) against memcpy of the same bytes,
// measured side by side in one run: each benchmark times, on device 0, K collectives of B bytes
// over P threads and K single-threaded memcpys of B bytes, and reports
//   algbw     = B / t_collective                       (bytes per second, as NCCL's tests)
//   busbw     = algbw * 2(P-1)/P  for all-reduce        (the bytes each rank must move through
//             = algbw * (P-1)/P   for all-gather         its link; NCCL's tests' definition)
//   memcpy    = B / t_memcpy
//   vs_memcpy = algbw / memcpy
// B is the all-reduce buffer and the all-gather OUTPUT, as in cost/collective_cost.h. Every
// collective ends with all members done, so t_collective is the time of the slowest member.
//
//   cmake --build build --target collectives_bench && ./build/bench/collectives_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "runtime/in_process_communicator.h"

namespace {

using alpa::Status;
using alpa::runtime::Communicator;
using alpa::runtime::ReduceOp;

enum class Kind { kAllReduce, kAllGather };

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_Collective(benchmark::State& state, Kind kind) {
  const int64_t members = state.range(0);
  const int64_t bytes = state.range(1);
  const int64_t count = bytes / 4;  // f32 elements
  // A batch moves ~64 MiB, so small sizes are not timed at the clock's resolution.
  const int64_t repeats = std::max<int64_t>(2, (int64_t{64} << 20) / bytes);
  alpa::runtime::InProcessWorld world(members);
  std::vector<int64_t> group(members);
  std::iota(group.begin(), group.end(), 0);
  std::vector<std::vector<float>> inputs(members), outputs(members);
  for (int64_t d = 0; d < members; ++d) {
    inputs[d].assign(kind == Kind::kAllReduce ? count : count / members, 1.0f);
    outputs[d].assign(count, 0.0f);
  }
  std::vector<char> source(bytes, 1), target(bytes, 0);
  double collective_s = 0, memcpy_s = 0;
  for (auto _ : state) {
    auto memcpy_start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < repeats; ++i) {
      std::memcpy(target.data(), source.data(), bytes);
      benchmark::DoNotOptimize(target.data());
    }
    memcpy_s += Seconds(memcpy_start);
    double seconds = 0;
    std::vector<Status> statuses = alpa::runtime::RunOnDevices(world, [&](Communicator& comm) {
      const int64_t d = comm.rank();
      auto in = alpa::runtime::ViewOf(alpa::ir::DType::kF32, std::as_const(inputs[d]));
      auto out = alpa::runtime::ViewOf(alpa::ir::DType::kF32, outputs[d]);
      // Thread start-up is not timed: the clock starts when all members are in.
      ALPA_RETURN_IF_ERROR(comm.Barrier(group));
      auto start = std::chrono::steady_clock::now();
      for (int64_t i = 0; i < repeats; ++i) {
        ALPA_RETURN_IF_ERROR(kind == Kind::kAllReduce
                                 ? comm.AllReduce(group, ReduceOp::kSum, in, out)
                                 : comm.AllGather(group, in, out));
      }
      if (d == 0) seconds = Seconds(start);
      return Status::Ok();
    });
    for (const Status& status : statuses) {
      if (!status.ok()) state.SkipWithError(status.ToString().c_str());
    }
    collective_s += seconds;
    state.SetIterationTime(seconds);  // one iteration is the batch of `repeats`
  }
  const double moved = static_cast<double>(bytes) * repeats * state.iterations();
  const double algbw = moved / collective_s;
  const double factor = kind == Kind::kAllReduce ? 2.0 * (members - 1) / members
                                                 : static_cast<double>(members - 1) / members;
  const double memcpy_bw = moved / memcpy_s;
  state.counters["algbw_GBps"] = algbw / 1e9;
  state.counters["busbw_GBps"] = algbw * factor / 1e9;
  state.counters["memcpy_GBps"] = memcpy_bw / 1e9;
  state.counters["vs_memcpy"] = algbw / memcpy_bw;
}

void Sizes(benchmark::internal::Benchmark* benchmark) {
  for (int64_t members : {2, 4, 8}) {
    for (int64_t bytes : {int64_t{256} << 10, int64_t{4} << 20, int64_t{64} << 20}) {
      benchmark->Args({members, bytes});
    }
  }
  benchmark->ArgNames({"threads", "bytes"})->UseManualTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_Collective, all_reduce, Kind::kAllReduce)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Collective, all_gather, Kind::kAllGather)->Apply(Sizes);

}  // namespace

BENCHMARK_MAIN();
