#include "pipeline/stage_dp.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <tuple>

#include "pipeline/alpa_formula.h"

namespace alpa::pipeline {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Status ValidateTable(const StageCostTable& table) {
  if (table.num_layers < 1)
    return InvalidArgument("num_layers is {}: needs >= 1", table.num_layers);
  if (table.submesh_devices.empty()) return InvalidArgument("submesh_devices is empty");
  for (size_t m = 0; m < table.submesh_devices.size(); ++m) {
    if (table.submesh_devices[m] < 1) {
      return InvalidArgument("submesh_devices[{}] is {}: needs >= 1", m, table.submesh_devices[m]);
    }
  }
  if (table.num_configs < 1) {
    return InvalidArgument("num_configs is {}: needs >= 1", table.num_configs);
  }
  const size_t size = table.Index(table.num_layers, 0, 0, 0);
  if (table.time_s.size() != size || table.max_successors.size() != size) {
    return InvalidArgument(
        "time_s has {} and max_successors {} entries: both need num_layers^2 x submeshes x "
        "num_configs = {}",
        table.time_s.size(), table.max_successors.size(), size);
  }
  const int64_t num_submeshes = static_cast<int64_t>(table.submesh_devices.size());
  if (!table.submesh_pools.empty() &&
      static_cast<int64_t>(table.submesh_pools.size()) != num_submeshes) {
    return InvalidArgument("submesh_pools has {} entries: needs one per sub-mesh ({}) or none",
                           table.submesh_pools.size(), num_submeshes);
  }
  for (int64_t l = 0; l < table.num_layers; ++l) {
    for (int64_t i = l; i < table.num_layers; ++i) {
      for (int64_t m = 0; m < num_submeshes; ++m) {
        for (int64_t c = 0; c < table.num_configs; ++c) {
          const size_t index = table.Index(l, i, m, c);
          if (std::isnan(table.time_s[index]) || table.time_s[index] < 0) {
            return InvalidArgument("time_s[{}][{}][{}][{}] is {}: times must be >= 0 (+inf = none)",
                                   l, i, m, c, table.time_s[index]);
          }
          if (table.max_successors[index] < -1) {
            return InvalidArgument("max_successors[{}][{}][{}][{}] is {}: needs >= -1", l, i, m, c,
                                   table.max_successors[index]);
          }
        }
      }
    }
  }
  return Status::Ok();
}

Status ValidateOptions(const StageDpOptions& options) {
  if (options.num_devices < 1) {
    return InvalidArgument("num_devices is {}: needs >= 1", options.num_devices);
  }
  int64_t pooled = 0;
  for (size_t p = 0; p < options.devices_per_pool.size(); ++p) {
    if (options.devices_per_pool[p] < 1) {
      return InvalidArgument("devices_per_pool[{}] is {}: needs >= 1", p,
                             options.devices_per_pool[p]);
    }
    pooled += options.devices_per_pool[p];
  }
  if (!options.devices_per_pool.empty() && pooled != options.num_devices) {
    return InvalidArgument("devices_per_pool sums to {}, num_devices is {}: they must agree",
                           pooled, options.num_devices);
  }
  if (options.num_micro_batches < 1) {
    return InvalidArgument("num_micro_batches is {}: needs >= 1", options.num_micro_batches);
  }
  if (!std::isfinite(options.epsilon_s) || options.epsilon_s < 0) {
    return InvalidArgument("epsilon_s is {}: needs a finite value >= 0", options.epsilon_s);
  }
  if (options.max_candidates < 1) {
    return InvalidArgument("max_candidates is {}: needs >= 1", options.max_candidates);
  }
  return Status::Ok();
}

// One configuration of a stage (layers l..i on sub-mesh m) that is the fastest allowed for some
// number of successors.
struct StageOption {
  double time_s;
  int64_t max_successors;
  int64_t config;
};

// The answer of one bound at (all layers, all devices) for one stage-count class.
struct ClassAnswer {
  int64_t stage_class;
  double sum_s;
  double max_s;  // the largest stage time of that plan
};

// target = min(target, source + stage) over n states, ties to the smaller largest stage: the
// DP's inner loop, branch-free so that it vectorises (source and target are different rows).
// Cloned for AVX2, chosen at run time: 4 states per instruction where the CPU has it.
__attribute__((target_clones("avx2", "default"))) void RelaxSpan(
    double* __restrict target_sum, double* __restrict target_max,
    const double* __restrict source_sum, const double* __restrict source_max, int64_t n,
    double time_s) {
  for (int64_t d = 0; d < n; ++d) {
    const double sum = source_sum[d] + time_s;
    const double max = std::max(source_max[d], time_s);
    const bool better = sum < target_sum[d] || (sum == target_sum[d] && max < target_max[d]);
    target_sum[d] = better ? sum : target_sum[d];
    target_max[d] = better ? max : target_max[d];
  }
}

// F of the header for one t_max, over plain arrays, and the plans read back from it.
//
// Two reductions keep it fast without changing its answers:
//  - Per (l, i, m) only the configurations on the staircase "faster than every configuration
//    allowing as many successors" can win; with s - 1 successors the winner is the fastest one
//    with max_successors >= s - 1, and it is allowed under t_max iff any is.
//  - The stage count s only matters through that memory check. With S_max the most stages a plan
//    can have and m* the largest max_successors below S_max - 1, a stage with more than m*
//    successors passes iff its max_successors >= S_max - 1, whatever the exact count. So counts
//    s >= E = max(m* + 1, 1) share one row, class E ("E stages or more"), fed by classes E - 1 and
//    E; classes 0 .. E-1 are exact counts. Without memory limits E = 1: the DP is over (l, d).
// Ties in the sum go to the smaller largest stage, which keeps F exact for the latency: appending a
// stage preserves the order of (sum, largest stage) pairs.
//
// The devices left, one count per pool, are one mixed-radix index d = sum_p left_p · stride_p
// (stride_p = prod_{q<p} (devices_q + 1)); a stage on sub-mesh m takes n_m · stride of its pool,
// allowed where that pool's digit of d is at least n_m. With one pool d is the device count.
//
// Devices are counted in units (DeviceUnits): pool p's counts and its sub-meshes' sizes divided
// by its unit.
class StageDp {
 public:
  StageDp(const StageCostTable& table, const std::vector<int64_t>& pools,
          const std::vector<int64_t>& units)
      : num_layers_(table.num_layers),
        num_submeshes_(static_cast<int64_t>(table.submesh_devices.size())),
        option_begin_{0} {
    for (int64_t m = 0; m < num_submeshes_; ++m) {
      const size_t pool = table.submesh_pools.empty() ? 0 : table.submesh_pools[m];
      submesh_pool_.push_back(static_cast<int64_t>(pool));
      submesh_devices_.push_back(table.submesh_devices[m] / units[pool]);
    }
    std::vector<int64_t> pool_units;
    for (size_t pool = 0; pool < pools.size(); ++pool) {
      pool_units.push_back(pools[pool] / units[pool]);
    }
    int64_t stride = 1;
    std::vector<int64_t> strides;
    for (int64_t devices : pool_units) {
      strides.push_back(stride);
      stride *= devices + 1;
    }
    all_devices_ = stride - 1;  // every pool's digit at its maximum
    for (size_t pool = 0; pool < pools.size(); ++pool) {
      std::vector<int64_t>& digits = pool_digits_.emplace_back();
      for (int64_t d = 0; d <= all_devices_; ++d) {
        digits.push_back(d / strides[pool] % (pool_units[pool] + 1));
      }
    }
    for (int64_t m = 0; m < num_submeshes_; ++m) {
      submesh_step_.push_back(submesh_devices_[m] * strides[submesh_pool_[m]]);
    }
    const int64_t total_devices = std::accumulate(pools.begin(), pools.end(), int64_t{0});
    int64_t smallest_submesh = total_devices;  // in devices
    for (int64_t l = 0; l < num_layers_; ++l) {
      for (int64_t i = 0; i < num_layers_; ++i) {  // slots with i < l stay empty
        for (int64_t m = 0; m < num_submeshes_; ++m) {
          if (i >= l && table.submesh_devices[m] <= pools[submesh_pool_[m]] &&
              AddStaircase(table, l, i, m)) {
            smallest_submesh = std::min(smallest_submesh, table.submesh_devices[m]);
          }
          option_begin_.push_back(options_.size());
        }
      }
    }
    const int64_t max_stages = std::min(num_layers_, total_devices / smallest_submesh);
    int64_t largest_limiting = -1;  // m*
    for (const StageOption& option : options_) {
      times_.push_back(option.time_s);
      if (option.max_successors < max_stages - 1) {
        largest_limiting = std::max(largest_limiting, option.max_successors);
      }
    }
    std::sort(times_.begin(), times_.end());
    times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
    merged_class_ = std::max<int64_t>(largest_limiting + 1, 1);
    const size_t cells = static_cast<size_t>((merged_class_ + 1) * (num_layers_ + 1));
    // Left uninitialised (Cover writes what a solve reaches): value-initialising would touch
    // every page, 2 x 2 GiB at 16,384 devices.
    const size_t states = cells * static_cast<size_t>(all_devices_ + 1);
    sum_ = std::make_unique_for_overwrite<double[]>(states);
    max_ = std::make_unique_for_overwrite<double[]>(states);
    row_first_.resize(cells);
    row_last_.resize(cells);
    row_lo_.resize(cells);
    row_hi_.resize(cells);
  }

  // The distinct times of the stage options, ascending: the bounds worth solving (the DP only
  // ever picks staircase options, so a plan's largest stage is one of them).
  const std::vector<double>& times() const { return times_; }

  void Solve(double t_max) {
    std::fill(row_first_.begin(), row_first_.end(), all_devices_ + 1);
    std::fill(row_last_.begin(), row_last_.end(), -1);
    std::fill(row_lo_.begin(), row_lo_.end(), all_devices_ + 1);
    std::fill(row_hi_.begin(), row_hi_.end(), -1);
    const size_t end = Row(0, num_layers_);
    Cover(end, 0, 0);
    sum_[Cell(end, 0)] = 0;
    max_[Cell(end, 0)] = 0;
    row_first_[end] = row_last_[end] = 0;
    for (int64_t stage_class = 1; stage_class <= merged_class_; ++stage_class) {
      for (int64_t l = num_layers_ - stage_class; l >= 0; --l) {
        const size_t row = Row(stage_class, l);
        ForEachTransition(
            stage_class, l, t_max,
            [&](int64_t i, int64_t m, int64_t source_class, const StageOption& option) {
              Relax(row, Row(source_class, i + 1), m, option.time_s);
              return false;
            });
        for (int64_t d = row_lo_[row]; d <= row_hi_[row]; ++d) {
          if (sum_[Cell(row, d)] == kInf) continue;
          row_first_[row] = std::min(row_first_[row], d);
          row_last_[row] = d;
        }
      }
    }
  }

  std::vector<ClassAnswer> Answers() const {
    std::vector<ClassAnswer> answers;
    for (int64_t stage_class = 1; stage_class <= merged_class_; ++stage_class) {
      const size_t row = Row(stage_class, 0);
      const double sum = SumAt(row, all_devices_);
      if (sum < kInf) answers.push_back({stage_class, sum, MaxAt(row, all_devices_)});
    }
    return answers;
  }

  // The plan behind a finite answer: at each state, the first transition (in the order the DP
  // tries them) that reproduces its (sum, largest stage) exactly.
  std::vector<DpStage> Plan(int64_t stage_class, double t_max) const {
    std::vector<DpStage> stages;
    int64_t l = 0;
    int64_t d = all_devices_;
    while (l < num_layers_) {
      const size_t row = Row(stage_class, l);
      const bool found = ForEachTransition(
          stage_class, l, t_max,
          [&](int64_t i, int64_t m, int64_t source_class, const StageOption& option) {
            if (!Fits(m, d)) return false;
            const int64_t rest = d - submesh_step_[m];
            const size_t source = Row(source_class, i + 1);
            if (SumAt(source, rest) + option.time_s != SumAt(row, d) ||
                std::max(MaxAt(source, rest), option.time_s) != MaxAt(row, d)) {
              return false;
            }
            stages.push_back({l, i, m, option.config, option.time_s});
            l = i + 1;
            d = rest;
            stage_class = source_class;
            return true;
          });
      ALPA_CHECK(found, "no transition reproduces the DP state (class {}, layer {}, {} devices)",
                 stage_class, l, d);
    }
    return stages;
  }

 private:
  size_t OptionSlot(int64_t l, int64_t i, int64_t m) const {
    return static_cast<size_t>((l * num_layers_ + i) * num_submeshes_ + m);
  }
  size_t Row(int64_t stage_class, int64_t l) const {
    return static_cast<size_t>(stage_class * (num_layers_ + 1) + l);
  }
  size_t Cell(size_t row, int64_t d) const {
    return row * static_cast<size_t>(all_devices_ + 1) + static_cast<size_t>(d);
  }
  // F's sum and largest stage at (row, d): +inf outside the row's initialised range.
  double SumAt(size_t row, int64_t d) const {
    return d < row_lo_[row] || d > row_hi_[row] ? kInf : sum_[Cell(row, d)];
  }
  double MaxAt(size_t row, int64_t d) const {
    return d < row_lo_[row] || d > row_hi_[row] ? kInf : max_[Cell(row, d)];
  }
  // Extends the row's initialised range to [first, last], the new entries +inf. A solve thus
  // writes only the device counts its relaxations reach, not every row's D + 1 entries.
  void Cover(size_t row, int64_t first, int64_t last) {
    if (first > last) return;
    int64_t& lo = row_lo_[row];
    int64_t& hi = row_hi_[row];
    auto fill = [&](int64_t from, int64_t to) {  // [from, to]
      std::fill(&sum_[Cell(row, from)], &sum_[Cell(row, to)] + 1, kInf);
      std::fill(&max_[Cell(row, from)], &max_[Cell(row, to)] + 1, kInf);
    };
    if (lo > hi) {
      fill(first, last);
      lo = first;
      hi = last;
      return;
    }
    if (first < lo) fill(first, lo - 1);
    if (last > hi) fill(hi + 1, last);
    lo = std::min(lo, first);
    hi = std::max(hi, last);
  }
  // Whether sub-mesh m's devices are left in its pool at state d.
  bool Fits(int64_t m, int64_t d) const {
    return pool_digits_[static_cast<size_t>(submesh_pool_[m])][static_cast<size_t>(d)] >=
           submesh_devices_[m];
  }

  // Appends the staircase of (l, i, m); false when it is empty.
  bool AddStaircase(const StageCostTable& table, int64_t l, int64_t i, int64_t m) {
    std::vector<StageOption> usable;
    for (int64_t c = 0; c < table.num_configs; ++c) {
      const size_t index = table.Index(l, i, m, c);
      if (table.time_s[index] < kInf && table.max_successors[index] >= 0) {
        usable.push_back({table.time_s[index], table.max_successors[index], c});
      }
    }
    std::stable_sort(usable.begin(), usable.end(), [](const StageOption& a, const StageOption& b) {
      return a.time_s < b.time_s;
    });
    const size_t begin = options_.size();
    for (const StageOption& option : usable) {
      if (options_.size() == begin || option.max_successors > options_.back().max_successors) {
        options_.push_back(option);
      }
    }
    return options_.size() > begin;
  }

  // Calls visit(i, m, source_class, option) for every stage l..i prepended to a state of
  // source_class that is allowed under t_max, in a fixed order, until it returns true.
  template <typename Visit>
  bool ForEachTransition(int64_t stage_class, int64_t l, double t_max, Visit&& visit) const {
    const int64_t last_source = stage_class == merged_class_ ? stage_class : stage_class - 1;
    for (int64_t i = l; i < num_layers_; ++i) {
      for (int64_t m = 0; m < num_submeshes_; ++m) {
        const size_t slot = OptionSlot(l, i, m);
        for (int64_t source_class = stage_class - 1; source_class <= last_source; ++source_class) {
          // The source class counts the successors; class E's are all > m*.
          for (size_t o = option_begin_[slot]; o < option_begin_[slot + 1]; ++o) {
            if (options_[o].max_successors < source_class) continue;
            if (options_[o].time_s <= t_max && visit(i, m, source_class, options_[o])) return true;
            break;
          }
        }
      }
    }
    return false;
  }

  // F(target row, d) = min(F(target row, d), F(source row, d - sub-mesh m) + time) over the finite
  // part of the source row, ties to the smaller largest stage.
  void Relax(size_t target, size_t source, int64_t m, double time_s) {
    // With one pool d >= first >= devices always fits: the loop runs without the check.
    if (pool_digits_.size() == 1) {
      RelaxRange</*one_pool=*/true>(target, source, m, time_s);
    } else {
      RelaxRange</*one_pool=*/false>(target, source, m, time_s);
    }
  }
  template <bool one_pool>
  void RelaxRange(size_t target, size_t source, int64_t m, double time_s) {
    const int64_t devices = submesh_step_[m];
    const int64_t first = row_first_[source] + devices;
    const int64_t last = std::min(row_last_[source] + devices, all_devices_);
    Cover(target, first, last);
    double* target_sum = &sum_[Cell(target, 0)];
    double* target_max = &max_[Cell(target, 0)];
    const double* source_sum = &sum_[Cell(source, 0)];
    const double* source_max = &max_[Cell(source, 0)];
    if constexpr (one_pool) {
      RelaxSpan(target_sum + first, target_max + first, source_sum + first - devices,
                source_max + first - devices, last - first + 1, time_s);
      return;
    }
    for (int64_t d = first; d <= last; ++d) {
      if (!Fits(m, d)) continue;
      const double sum = source_sum[d - devices] + time_s;
      const double max = std::max(source_max[d - devices], time_s);
      if (sum < target_sum[d] || (sum == target_sum[d] && max < target_max[d])) {
        target_sum[d] = sum;
        target_max[d] = max;
      }
    }
  }

  int64_t num_layers_;
  int64_t num_submeshes_;
  int64_t all_devices_ = 0;  // the state with every device of every pool left
  std::vector<int64_t> submesh_devices_;  // in its pool's units
  std::vector<int64_t> submesh_pool_;
  std::vector<int64_t> submesh_step_;              // what a stage on the sub-mesh takes from d
  std::vector<std::vector<int64_t>> pool_digits_;  // per pool: its digit of each d
  std::vector<StageOption> options_;               // the staircases, (l, i, m) after each other
  std::vector<size_t> option_begin_;               // per (l, i, m) slot, and one past the last
  std::vector<double> times_;
  int64_t merged_class_ = 1;  // E
  std::unique_ptr<double[]> sum_;  // [class][l][d]
  std::unique_ptr<double[]> max_;
  std::vector<int64_t> row_first_;  // per [class][l], the finite d range (first > last = none)
  std::vector<int64_t> row_last_;
  std::vector<int64_t> row_lo_;  // per [class][l], the initialised d range (Cover)
  std::vector<int64_t> row_hi_;
};

// Per pool, the largest unit g_p dividing its device count and the size of each of its
// sub-meshes that has a candidate stage. Every state the DP reaches from "all devices left" then
// has a multiple of g_p devices left in pool p, so counting in units of g_p solves the same
// problem over D / g + 1 device states instead of D + 1: 129 instead of 16,385 where a 405B
// model's stages on 16,384 devices need at least 128 each.
std::vector<int64_t> DeviceUnits(const StageCostTable& table, const std::vector<int64_t>& pools) {
  std::vector<int64_t> units = pools;
  const int64_t num_submeshes = static_cast<int64_t>(table.submesh_devices.size());
  for (int64_t m = 0; m < num_submeshes; ++m) {
    const size_t pool = table.submesh_pools.empty() ? 0 : table.submesh_pools[m];
    bool has_candidate = false;
    for (int64_t l = 0; l < table.num_layers && !has_candidate; ++l) {
      for (int64_t i = l; i < table.num_layers && !has_candidate; ++i) {
        for (int64_t c = 0; c < table.num_configs && !has_candidate; ++c) {
          const size_t index = table.Index(l, i, m, c);
          has_candidate = table.time_s[index] < kInf && table.max_successors[index] >= 0;
        }
      }
    }
    if (has_candidate) units[pool] = std::gcd(units[pool], table.submesh_devices[m]);
  }
  return units;
}

bool StageLess(const DpStage& a, const DpStage& b) {
  return std::tie(a.first_layer, a.last_layer, a.submesh, a.config) <
         std::tie(b.first_layer, b.last_layer, b.submesh, b.config);
}
bool StagesEqual(const std::vector<DpStage>& a, const std::vector<DpStage>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const DpStage& x, const DpStage& y) {
    return !StageLess(x, y) && !StageLess(y, x);
  });
}
// Best first: latency, then fewer stages, then the stage lists lexicographically.
bool CandidateLess(const StagePlanCandidate& a, const StagePlanCandidate& b) {
  if (a.latency_s != b.latency_s) return a.latency_s < b.latency_s;
  if (a.stages.size() != b.stages.size()) return a.stages.size() < b.stages.size();
  return std::lexicographical_compare(a.stages.begin(), a.stages.end(), b.stages.begin(),
                                      b.stages.end(), StageLess);
}

// What one solved bound says about the staircase of smallest sums.
struct BoundAnswer {
  bool feasible = false;
  double min_sum_s = kInf;      // the smallest sum of any plan under the bound
  double min_sum_max_s = kInf;  // the largest stage of that plan (the smallest, on ties)
};

}  // namespace

StageCostTable StageCostTable::Make(int64_t num_layers, std::vector<int64_t> submesh_devices,
                                    int64_t num_configs) {
  StageCostTable table;
  table.num_layers = num_layers;
  table.submesh_devices = std::move(submesh_devices);
  table.num_configs = num_configs;
  const size_t size = table.Index(num_layers, 0, 0, 0);
  table.time_s.assign(size, kInf);
  table.max_successors.assign(size, -1);
  return table;
}

// Which bounds are solved. Let f(t) be the smallest sum of a plan whose stages are all <= t, P(t)
// the plan with it and r(t) <= t its largest stage. A plan with largest stage in [r(t), t] has
// sum >= f(t), so latency >= f(t) + (B - 1) r(t), which P(t) achieves: after solving t, the next
// bound worth solving is the largest stage time below r(t). Walking down from the loosest bound
// this way visits each step of the staircase f once. It stops when no plan left can win:
//   - below the tightest feasible bound t_min there is no plan (found by bisection first,
//     feasibility only grows with the bound);
//   - every plan left has sum >= f(t) and largest stage >= t_min: f(t) + (B - 1) t_min >= best;
//   - a plan with largest stage t has latency >= max(B t, f_min + (B - 1) t), f_min = f(+inf):
//     bounds where that is >= best are skipped (Alpa's early stop is the B t half).
Result<StageDpResult> SolveStageDp(const StageCostTable& table, const StageDpOptions& options) {
  ALPA_RETURN_IF_ERROR(ValidateTable(table));
  ALPA_RETURN_IF_ERROR(ValidateOptions(options));
  const std::vector<int64_t> pools = options.devices_per_pool.empty()
                                         ? std::vector<int64_t>{options.num_devices}
                                         : options.devices_per_pool;
  for (size_t m = 0; m < table.submesh_pools.size(); ++m) {
    if (table.submesh_pools[m] < 0 || table.submesh_pools[m] >= std::ssize(pools)) {
      return InvalidArgument("submesh_pools[{}] is {}: the options have {} pool(s)", m,
                             table.submesh_pools[m], pools.size());
    }
  }
  StageDp dp(table, pools, DeviceUnits(table, pools));
  const std::vector<double>& times = dp.times();
  const int micro_batches = options.num_micro_batches;
  StageDpResult result;
  std::vector<StagePlanCandidate> plans;
  double best_s = kInf;                  // the smallest latency in plans
  std::map<size_t, BoundAnswer> solved;  // by index into times

  auto solve = [&](size_t index) -> BoundAnswer {
    if (auto it = solved.find(index); it != solved.end()) return it->second;
    const double t_max = times[index];
    dp.Solve(t_max);
    ++result.t_max_values_tried;
    BoundAnswer answer;
    for (const ClassAnswer& found : dp.Answers()) {
      answer.feasible = true;
      if (std::tie(found.sum_s, found.max_s) < std::tie(answer.min_sum_s, answer.min_sum_max_s)) {
        answer.min_sum_s = found.sum_s;
        answer.min_sum_max_s = found.max_s;
      }
      StagePlanCandidate plan{.stages = dp.Plan(found.stage_class, t_max)};
      std::vector<double> stage_times;
      for (const DpStage& stage : plan.stages) stage_times.push_back(stage.time_s);
      plan.latency_s = AlpaPipelineLatency(stage_times, micro_batches);
      best_s = std::min(best_s, plan.latency_s);
      plans.push_back(std::move(plan));
    }
    solved[index] = answer;
    return answer;
  };

  if (times.empty()) return result;
  const size_t loosest = times.size() - 1;
  BoundAnswer answer = solve(loosest);
  if (!answer.feasible) return result;
  const double min_sum_s = answer.min_sum_s;
  size_t tightest = 0;
  for (size_t feasible = loosest; tightest < feasible;) {  // bounds below tightest are infeasible
    const size_t middle = tightest + (feasible - tightest) / 2;
    if (solve(middle).feasible) {
      feasible = middle;
    } else {
      tightest = middle + 1;
    }
  }
  const double t_min = times[tightest];
  const double wait_factor = micro_batches - 1;
  auto can_win = [&](double largest_stage_s) {  // the lower bound of the last bullet above
    return micro_batches * largest_stage_s < best_s &&
           min_sum_s + wait_factor * largest_stage_s < best_s;
  };
  for (size_t index = loosest;;) {
    if (answer.min_sum_s + wait_factor * t_min >= best_s) break;
    // Bounds [tightest, end) are left: below r(t), at least epsilon below t, able to win.
    size_t end =
        std::min(std::lower_bound(times.begin(), times.end(), answer.min_sum_max_s) - times.begin(),
                 std::upper_bound(times.begin(), times.end(), times[index] - options.epsilon_s) -
                     times.begin());
    end = std::partition_point(times.begin(), times.begin() + end, can_win) - times.begin();
    if (end <= tightest) break;
    index = end - 1;
    answer = solve(index);
  }

  std::sort(plans.begin(), plans.end(), CandidateLess);
  for (StagePlanCandidate& plan : plans) {
    if (static_cast<int64_t>(result.candidates.size()) == options.max_candidates) break;
    if (!result.candidates.empty() && StagesEqual(result.candidates.back().stages, plan.stages)) {
      continue;
    }
    result.candidates.push_back(std::move(plan));
  }
  return result;
}

}  // namespace alpa::pipeline
