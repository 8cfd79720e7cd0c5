// Two profiles of one machine, figure by figure: how far each figure both kept moved, and each
// derived figure both have. A profile pins its figures down within itself (profiler.h); a change
// of the machine's speed between two profiles shows only when they are compared, and a change of
// where the host placed its cores shows in their round trips (core_round_trip.h).
#ifndef ALPA_RUNTIME_PROFILE_COMPARISON_H_
#define ALPA_RUNTIME_PROFILE_COMPARISON_H_

#include <optional>
#include <string>
#include <vector>

#include "runtime/profile_database.h"

namespace alpa::runtime {

// One figure in both profiles. `relative` = |after - before| / before.
struct FigureChange {
  std::string name;  // a measurement's name, or a derived figure's ("peak_flops f32",
                     // "memory_bandwidth", "all-reduce latency_s", "all-reduce bandwidth")
  double before = 0;
  double after = 0;
  double relative = 0;
  bool collective = false;  // a collective's measurement or fit: moves with the cores' placement
  friend bool operator==(const FigureChange&, const FigureChange&) = default;
};

struct ProfileComparison {
  // Measurements both profiles kept (median seconds), in the order of `after`.
  std::vector<FigureChange> measurements;
  // Derived figures both profiles have, in a fixed order: peaks by dtype, memory bandwidth,
  // collective fits by kind.
  std::vector<FigureChange> derived;
  // Measurements of `after` flagged in either profile, or absent from `before`: not compared.
  std::vector<std::string> not_compared;
  // The median core round trips (core_round_trip.h), when both profiles took them.
  std::optional<FigureChange> core_round_trip;
  // Whether the host placed the cores differently for the two profiles (CoresPlacedDifferently):
  // collectives over the in-process communicator then describe two different machines.
  bool cores_placed_differently = false;
};

ProfileComparison CompareProfiles(const ProfileDatabase& before, const ProfileDatabase& after);

// The figures of `changes` that moved by more than `limit` (a fraction), largest first.
std::vector<FigureChange> MovedMoreThan(const std::vector<FigureChange>& changes, double limit);

}  // namespace alpa::runtime

#endif  // ALPA_RUNTIME_PROFILE_COMPARISON_H_
