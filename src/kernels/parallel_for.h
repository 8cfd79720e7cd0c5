// Internal to the kernels layer: a loop split into fixed chunks run by the calling thread's
// OpenMP team.
//
// The chunks depend only on the trip count and the grain, never on the number of threads, so a
// kernel whose chunks write disjoint outputs, or whose per-chunk partial results are combined in
// chunk order, gives the same bytes with any thread count (the determinism contract of the
// kernels). A caller running several kernels at once (one per device thread) sets each thread's
// team size with omp_set_num_threads, as for oneDNN (matmul.h).
#ifndef ALPA_KERNELS_PARALLEL_FOR_H_
#define ALPA_KERNELS_PARALLEL_FOR_H_

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace alpa::kernels::internal {

// Elements per chunk for a kernel streaming f32 arrays: large enough that a chunk amortises the
// team's fork and join (~a microsecond), small enough for two cores to share a 1 MiB array.
inline constexpr int64_t kElementGrain = int64_t{1} << 15;

// The number of chunks of `grain` iterations that cover [0, n).
inline int64_t ChunkCount(int64_t n, int64_t grain) { return (n + grain - 1) / grain; }

// Calls body(begin, end) for each chunk [c * grain, min(n, (c + 1) * grain)) of [0, n); chunks
// run concurrently when there are several and the team has several threads.
template <typename Body>
void ParallelFor(int64_t n, int64_t grain, const Body& body) {
  if (n <= 0) return;
  const int64_t chunks = ChunkCount(n, grain);
  if (chunks == 1 || omp_get_max_threads() == 1 || omp_in_parallel()) {
    for (int64_t c = 0; c < chunks; ++c) body(c * grain, std::min(n, (c + 1) * grain));
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) body(c * grain, std::min(n, (c + 1) * grain));
}

}  // namespace alpa::kernels::internal

#endif  // ALPA_KERNELS_PARALLEL_FOR_H_
