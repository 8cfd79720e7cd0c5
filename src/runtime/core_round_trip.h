// How far apart two of this machine's cores are: the time one cache line takes to go from one
// core to another and back. On a virtual machine it tells where the host has placed the cores: on
// the 2-core VMs this project is measured on it sits near 130 ns when the host runs both on one
// core complex (a shared L3) and near 480 ns when it runs them on two, and the host moves them
// between the two placements from one minute to the next. Collectives over the in-process
// communicator move with it (a small one hands over faster on a shared L3, a large one copies
// faster across two), so a profile records it beside its collective figures, and comparing two
// profiles (profile_comparison.h) can tell a moved core from a noisy measurement.
#ifndef ALPA_RUNTIME_CORE_ROUND_TRIP_H_
#define ALPA_RUNTIME_CORE_ROUND_TRIP_H_

#include <cstdint>
#include <vector>

#include "support/status.h"

namespace alpa::runtime {

// Whether this process may run on two cores or more, which TimeCoreRoundTrips needs.
bool CanTimeCoreRoundTrips();

// Seconds that `count` round trips of a cache line between two threads took, the threads pinned
// to the first two cores this process may run on (one spins on the line until the other's write
// arrives, then writes back). FailedPrecondition when the process may run on fewer than two cores;
// a BatchTimer for profiler.h's MakeBatchSampler.
Result<double> TimeCoreRoundTrips(int64_t count);

// Whether two round trips (seconds; medians, or quantiles of one profile's rounds) were taken on
// differently placed cores: one is more than twice the other. The two placements seen here differ
// 3 to 4 times (115 to 184 ns against 405 to 770 ns, 100 samples over 5 minutes); within one, a
// median moves far less than 2 times.
bool CoresPlacedDifferently(double seconds_a, double seconds_b);

// Whether the host moved the cores while `round_trips` (one per round) were taken: their first and
// third quartiles were taken on differently placed cores, so that at least a quarter of the
// rounds ran in each placement (one slow round among nine is not a move).
bool CoresMovedDuring(const std::vector<double>& round_trips);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_CORE_ROUND_TRIP_H_
