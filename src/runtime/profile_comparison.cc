#include "runtime/profile_comparison.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "runtime/collective_profiler.h"
#include "runtime/core_round_trip.h"
#include "runtime/profiler.h"

namespace alpa::runtime {
namespace {

FigureChange Change(std::string name, double before, double after, bool collective) {
  return {.name = std::move(name),
          .before = before,
          .after = after,
          .relative = std::fabs(after - before) / before,
          .collective = collective};
}

struct DerivedFigure {
  std::string name;
  double value = 0;
  bool collective = false;
};

// The derived figures of `database`, in the order CompareProfiles reports them; absent ones (a
// flagged source) are left out.
std::vector<DerivedFigure> DerivedFigures(const ProfileDatabase& database) {
  std::vector<DerivedFigure> figures;
  for (const auto& [dtype, flops] : database.peak_flops) {
    figures.push_back({"peak_flops " + dtype, flops, false});
  }
  if (database.memory_bandwidth > 0) {
    figures.push_back({"memory_bandwidth", database.memory_bandwidth, false});
  }
  if (database.kernel_launch_s > 0) {
    figures.push_back({"kernel_launch_s", database.kernel_launch_s, false});
  }
  for (const auto& [kind, fit] : database.collectives) {
    figures.push_back({kind + " latency_s", fit.latency_s, true});
    figures.push_back({kind + " bandwidth", fit.bandwidth, true});
  }
  return figures;
}

}  // namespace

ProfileComparison CompareProfiles(const ProfileDatabase& before, const ProfileDatabase& after) {
  ProfileComparison comparison;
  std::map<std::string, const Measurement*> earlier;
  for (const Measurement& m : before.measurements) earlier[m.name] = &m;
  for (const Measurement& m : after.measurements) {
    auto it = earlier.find(m.name);
    if (it == earlier.end() || it->second->flagged || m.flagged || it->second->median_s <= 0) {
      comparison.not_compared.push_back(m.name);
      continue;
    }
    comparison.measurements.push_back(
        Change(m.name, it->second->median_s, m.median_s, IsProfiledCollective(m.kind)));
  }
  std::map<std::string, double> earlier_derived;
  for (const DerivedFigure& figure : DerivedFigures(before)) {
    earlier_derived[figure.name] = figure.value;
  }
  for (const DerivedFigure& figure : DerivedFigures(after)) {
    auto it = earlier_derived.find(figure.name);
    if (it != earlier_derived.end() && it->second > 0) {
      comparison.derived.push_back(
          Change(figure.name, it->second, figure.value, figure.collective));
    }
  }
  if (!before.core_round_trips_s.empty() && !after.core_round_trips_s.empty()) {
    const double then = Median(before.core_round_trips_s), now = Median(after.core_round_trips_s);
    if (then > 0) {
      comparison.core_round_trip = Change("core round trip", then, now, false);
      comparison.cores_placed_differently = CoresPlacedDifferently(then, now);
    }
  }
  return comparison;
}

std::vector<FigureChange> MovedMoreThan(const std::vector<FigureChange>& changes, double limit) {
  std::vector<FigureChange> moved;
  for (const FigureChange& change : changes) {
    if (change.relative > limit) moved.push_back(change);
  }
  std::stable_sort(moved.begin(), moved.end(), [](const FigureChange& a, const FigureChange& b) {
    return a.relative > b.relative;
  });
  return moved;
}

}  // namespace alpa::runtime
