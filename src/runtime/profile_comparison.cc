#include "runtime/profile_comparison.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace alpa::runtime {
namespace {

FigureChange Change(std::string name, double before, double after) {
  return {.name = std::move(name),
          .before = before,
          .after = after,
          .relative = std::fabs(after - before) / before};
}

// The derived figures of `database` by name, in the order CompareProfiles reports them; absent
// ones (a flagged source) are left out.
std::vector<std::pair<std::string, double>> DerivedFigures(const ProfileDatabase& database) {
  std::vector<std::pair<std::string, double>> figures;
  for (const auto& [dtype, flops] : database.peak_flops) {
    figures.emplace_back("peak_flops " + dtype, flops);
  }
  if (database.memory_bandwidth > 0) {
    figures.emplace_back("memory_bandwidth", database.memory_bandwidth);
  }
  for (const auto& [kind, fit] : database.collectives) {
    figures.emplace_back(kind + " latency_s", fit.latency_s);
    figures.emplace_back(kind + " bandwidth", fit.bandwidth);
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
    comparison.measurements.push_back(Change(m.name, it->second->median_s, m.median_s));
  }
  std::map<std::string, double> earlier_derived;
  for (const auto& [name, value] : DerivedFigures(before)) earlier_derived[name] = value;
  for (const auto& [name, value] : DerivedFigures(after)) {
    auto it = earlier_derived.find(name);
    if (it != earlier_derived.end() && it->second > 0) {
      comparison.derived.push_back(Change(name, it->second, value));
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
