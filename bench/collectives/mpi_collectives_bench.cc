// The MPI engine's collectives (runtime/mpi_communicator.h) against memcpy of the same bytes,
// measured side by side in one run, as collectives_bench.cc does for the in-process engine:
//   algbw = B / t_collective, busbw = algbw * 2(P-1)/P (all-reduce) or (P-1)/P (all-gather),
//   vs_memcpy = algbw / (B / t_memcpy), memcpy timed on rank 0 between the collectives.
// B is the all-reduce buffer and the all-gather output. Each figure is the median of 9 rounds;
// time us is the collective's.
//
//   ninja -C build mpi_collectives_bench
//   mpirun -np 2 --allow-run-as-root ./build/bench/mpi_collectives_bench
// Open MPI's non-blocking algorithms are picked by MCA parameters, e.g.
//   mpirun -np 2 --mca coll_libnbc_iallreduce_algorithm 1 ...   (1 ring, 2 binomial, ...)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <numeric>
#include <vector>

#include "runtime/mpi_communicator.h"

namespace {

using alpa::runtime::Communicator;
using Clock = std::chrono::steady_clock;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double SecondsOf(const std::function<void()>& run, Communicator& device,
                 const std::vector<int64_t>& everyone) {
  if (!device.Barrier(everyone).ok()) std::abort();
  const auto start = Clock::now();
  run();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main() {
  auto world = alpa::runtime::MpiWorld::Init();
  if (!world.ok()) {
    fmt::print(stderr, "{}\n", world.status().message());
    return 1;
  }
  Communicator& device = (*world)->communicator();
  const int64_t members = device.world_size();
  std::vector<int64_t> everyone(static_cast<size_t>(members));
  std::iota(everyone.begin(), everyone.end(), 0);
  if (device.rank() == 0) {
    fmt::print("{:>10}  {:>8}  {:>10}  {:>10}  {:>10}  {:>10}  {:>9}   ({} ranks)\n", "collective",
               "KiB", "time us", "algbw GB/s", "busbw GB/s", "memcpy", "vs_memcpy", members);
  }
  // 4 and 256 KiB are latency-bound, as most of a small model's collectives are.
  for (const int64_t kib : {4, 256, 1024, 16 << 10, 64 << 10}) {
    const int64_t bytes = kib << 10;
    const int64_t count = bytes / 4;
    std::vector<float> input(static_cast<size_t>(count), 1.0f), output(input.size());
    std::vector<float> block(input.size() / static_cast<size_t>(members), 1.0f);
    for (const bool all_reduce : {true, false}) {
      std::vector<double> collective, copy;
      for (int round = 0; round < 9; ++round) {
        collective.push_back(SecondsOf(
            [&] {
              const alpa::Status status =
                  all_reduce
                      ? device.AllReduce(everyone, alpa::runtime::ReduceOp::kSum,
                                         alpa::runtime::ViewOf(alpa::ir::DType::kF32, input),
                                         alpa::runtime::ViewOf(alpa::ir::DType::kF32, output))
                      : device.AllGather(everyone,
                                         alpa::runtime::ViewOf(alpa::ir::DType::kF32, block),
                                         alpa::runtime::ViewOf(alpa::ir::DType::kF32, output));
              if (!status.ok()) std::abort();
            },
            device, everyone));
        copy.push_back(
            SecondsOf([&] { std::memcpy(output.data(), input.data(), static_cast<size_t>(bytes)); },
                      device, everyone));
      }
      if (device.rank() != 0) continue;
      const double algbw = static_cast<double>(bytes) / Median(collective);
      const double factor = (all_reduce ? 2.0 : 1.0) * static_cast<double>(members - 1) /
                            static_cast<double>(members);
      const double memcpy_bw = static_cast<double>(bytes) / Median(copy);
      fmt::print("{:>10}  {:>8}  {:>10.1f}  {:>10.2f}  {:>10.2f}  {:>10.2f}  {:>9.2f}\n",
                 all_reduce ? "all-reduce" : "all-gather", kib, Median(collective) * 1e6,
                 algbw / 1e9, algbw * factor / 1e9, memcpy_bw / 1e9, algbw / memcpy_bw);
    }
  }
  return 0;
}
