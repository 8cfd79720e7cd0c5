#include "runtime/profiler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <thread>
#include <utility>

#include "ir/dtype.h"
#include "kernels/convolution.h"
#include "kernels/matmul.h"
#include "runtime/collective_profiler.h"
#include "runtime/core_round_trip.h"
#include "runtime/device_threads.h"
#include "runtime/kernel_launch.h"
#include "runtime/placed_buffers.h"
#include "runtime/profile_database.h"

namespace alpa::runtime {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// "64 MiB", "4 KiB" or "100 B".
std::string BytesText(int64_t bytes) {
  if (bytes % (int64_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

// Matmuls and convolutions run from caches and registers, whatever their buffers' placement
// (ProfileOptions::placements): one placement, and their memory stays that of one.
constexpr int64_t kComputeBoundPlacements = 1;

// One figure to measure: its description and how to prepare its sampler.
struct Plan {
  Measurement figure;
  // Allocates the buffers and returns the warmed-up, calibrated sampler, which owns them (sets
  // the figure's iterations_per_run).
  std::function<Result<Sampler>(const ProfileOptions&, Measurement&)> prepare;
};

Result<Sampler> OperationSampler(std::function<Status()> operation, const ProfileOptions& options,
                                 Measurement& figure) {
  Result<Sampler> sampler =
      MakeTimedSampler(std::move(operation), options.min_run_seconds, &figure.iterations_per_run);
  if (!sampler.ok()) return sampler.status().WithContext(figure.name);
  return sampler;
}

// A figure's placement (ProfileOptions::placements): the sampler's runs take them in turn.
struct PlacementTurn {
  int64_t placements = 1;
  int64_t current = 0;
};

// `sampler` with `turn` moved to the next placement before each of its runs. The warm-up and
// calibration ran on placement 0.
Sampler OnNextPlacementEveryRun(Sampler sampler, std::shared_ptr<PlacementTurn> turn) {
  return [sampler = std::move(sampler), turn = std::move(turn)] {
    turn->current = (turn->current + 1) % turn->placements;
    return sampler();
  };
}

// The sampler of `operation` on buffers of `specs` in `placements` placements (placed_buffers.h),
// each run on the next. `operation` gets the buffers and the placement to use.
Result<Sampler> BufferSampler(std::vector<PlacedBuffers::Spec> specs, int64_t placements,
                              std::function<Status(const PlacedBuffers&, int64_t)> operation,
                              const ProfileOptions& options, Measurement& figure) {
  auto buffers = std::make_shared<PlacedBuffers>(std::move(specs), placements);
  auto turn = std::make_shared<PlacementTurn>(PlacementTurn{placements, 0});
  ALPA_ASSIGN_OR_RETURN(Sampler sampler, OperationSampler(
                                             [buffers, turn, operation = std::move(operation)] {
                                               return operation(*buffers, turn->current);
                                             },
                                             options, figure));
  return OnNextPlacementEveryRun(std::move(sampler), std::move(turn));
}

Plan MatMulPlan(ir::DType dtype, int64_t batch, int64_t m, int64_t k, int64_t n) {
  Plan plan;
  Measurement& f = plan.figure;
  f.kind = "matmul";
  f.dtype = std::string(ir::DTypeName(dtype));
  f.name = batch == 1 && m == k && k == n
               ? fmt::format("matmul {} {}^3", f.dtype, m)
               : fmt::format("matmul {} {}x{}x{}x{}", f.dtype, batch, m, k, n);
  f.shape = {batch, m, k, n};
  f.work = 2.0 * static_cast<double>(batch) * m * k * n;
  f.unit = "FLOP";
  plan.prepare = [=](const ProfileOptions& options, Measurement& figure) {
    return BufferSampler(
        {{dtype, batch * m * k}, {dtype, batch * k * n}, {dtype, batch * m * n}},
        kComputeBoundPlacements,
        [=](const PlacedBuffers& buffers, int64_t p) {
          return kernels::BatchMatMul(dtype, batch, m, k, n, buffers.data(p, 0), buffers.data(p, 1),
                                      buffers.data(p, 2));
        },
        options, figure);
  };
  return plan;
}

Plan ConvolutionPlan(ir::DType dtype, const std::vector<int64_t>& s) {
  Plan plan;
  Measurement& f = plan.figure;
  const int64_t batch = s[0], in = s[1], h = s[2], w = s[3], out = s[4], kh = s[5], kw = s[6];
  f.kind = "convolution";
  f.dtype = std::string(ir::DTypeName(dtype));
  f.name =
      fmt::format("conv {} {}x{}x{}x{} k{}x{}x{}x{}", f.dtype, batch, in, h, w, out, in, kh, kw);
  f.shape = s;
  f.work = 2.0 * static_cast<double>(batch) * out * h * w * in * kh * kw;
  f.unit = "FLOP";
  plan.prepare = [=](const ProfileOptions& options, Measurement& figure) -> Result<Sampler> {
    kernels::ConvolutionParams params;
    params.batch = batch;
    params.input_features = in;
    params.output_features = out;
    params.input_spatial = {h, w};
    params.kernel_spatial = {kh, kw};
    params.output_spatial = {h, w};
    params.strides = {1, 1};
    params.pad_low = {(kh - 1) / 2, (kw - 1) / 2};
    params.pad_high = {kh - 1 - (kh - 1) / 2, kw - 1 - (kw - 1) / 2};
    params.lhs_dilation = {1, 1};
    params.rhs_dilation = {1, 1};
    ALPA_RETURN_IF_ERROR(kernels::ValidateConvolutionParams(params).WithContext(figure.name));
    return BufferSampler(
        {{dtype, batch * in * h * w}, {dtype, out * in * kh * kw}, {dtype, batch * out * h * w}},
        kComputeBoundPlacements,
        [=](const PlacedBuffers& buffers, int64_t p) {
          return kernels::Convolution(dtype, params, buffers.data(p, 0), buffers.data(p, 1),
                                      buffers.data(p, 2));
        },
        options, figure);
  };
  return plan;
}

Plan ElementwisePlan(int64_t array_bytes) {
  Plan plan;
  Measurement& f = plan.figure;
  const int64_t elements = array_bytes / 4;
  f.kind = "elementwise";
  f.dtype = "f32";
  f.name = fmt::format("add f32 {}", BytesText(array_bytes));
  f.shape = {elements};
  f.work = 3.0 * static_cast<double>(elements) * 4;
  f.unit = "B";
  plan.prepare = [=](const ProfileOptions& options, Measurement& figure) {
    constexpr ir::DType kF32 = ir::DType::kF32;
    return BufferSampler(
        {{kF32, elements}, {kF32, elements}, {kF32, elements}}, options.placements,
        [=](const PlacedBuffers& buffers, int64_t p) {
          const auto* a = static_cast<const float*>(buffers.data(p, 0));
          const auto* b = static_cast<const float*>(buffers.data(p, 1));
          auto* c = static_cast<float*>(buffers.data(p, 2));
#pragma omp parallel for schedule(static)
          for (int64_t i = 0; i < elements; ++i) c[i] = a[i] + b[i];
          return Status::Ok();
        },
        options, figure);
  };
  return plan;
}

// `timer` is shared by every collective plan and started by the first (its helper threads live
// until the last sampler is gone).
Plan CollectivePlan(const std::string& kind, int64_t bytes, int64_t devices,
                    std::shared_ptr<std::unique_ptr<CollectiveTimer>> timer) {
  Plan plan;
  Measurement& f = plan.figure;
  const int64_t elements = CollectiveElements(bytes, devices);
  f.kind = kind;
  f.dtype = "f32";
  f.name = fmt::format("{} f32 {} x{}", kind, BytesText(bytes), devices);
  f.shape = {devices, elements};
  f.work = 4.0 * static_cast<double>(elements);
  f.unit = "B";
  plan.prepare = [=](const ProfileOptions& options, Measurement& figure) -> Result<Sampler> {
    if (*timer == nullptr) {
      const int64_t largest =
          *std::max_element(options.collective_bytes.begin(), options.collective_bytes.end());
      *timer = std::make_unique<CollectiveTimer>(devices, options.placements,
                                                 CollectiveElements(largest, devices));
    }
    auto turn = std::make_shared<PlacementTurn>(PlacementTurn{options.placements, 0});
    Result<Sampler> sampler = MakeBatchSampler(
        [=](int64_t count) { return (*timer)->Time(kind, elements, count, turn->current); },
        options.min_run_seconds, &figure.iterations_per_run);
    if (!sampler.ok()) return sampler.status().WithContext(figure.name);
    return OnNextPlacementEveryRun(std::move(sampler).value(), std::move(turn));
  };
  return plan;
}

// The runtime's dispatch of one instruction (kernel_launch.h); the operation is one kernel.
Plan KernelLaunchPlan() {
  Plan plan;
  Measurement& f = plan.figure;
  f.kind = kKernelLaunchKind;
  f.dtype = "f32";
  f.name = fmt::format("kernel launch, {} adds of f32[1]", KernelLaunchTimer::kKernelsPerChain);
  f.shape = {KernelLaunchTimer::kKernelsPerChain, 1};
  f.work = 1;
  f.unit = "kernel";
  plan.prepare = [](const ProfileOptions& options, Measurement& figure) -> Result<Sampler> {
    Result<std::unique_ptr<KernelLaunchTimer>> created = KernelLaunchTimer::Create();
    if (!created.ok()) return created.status().WithContext(figure.name);
    std::shared_ptr<const KernelLaunchTimer> timer = std::move(created).value();
    Result<Sampler> sampler =
        MakeBatchSampler([timer](int64_t count) { return timer->Time(count); },
                         options.min_run_seconds, &figure.iterations_per_run);
    if (!sampler.ok()) return sampler.status().WithContext(figure.name);
    return sampler;
  };
  return plan;
}

constexpr char kCoreRoundTripKind[] = "core-round-trip";

// The cores' round trip (core_round_trip.h), measured in the rounds like a figure.
Plan CoreRoundTripPlan() {
  Plan plan;
  plan.figure.kind = kCoreRoundTripKind;
  plan.figure.name = "core round trip";
  plan.figure.work = 1;
  plan.figure.unit = "round trip";
  plan.prepare = [](const ProfileOptions& options, Measurement& figure) {
    return MakeBatchSampler(TimeCoreRoundTrips, options.min_run_seconds,
                            &figure.iterations_per_run);
  };
  return plan;
}

std::vector<Plan> Plans(const ProfileOptions& options, Status& status) {
  std::vector<Plan> plans;
  std::vector<ir::DType> dtypes;
  for (const std::string& name : options.dtypes) {
    std::optional<ir::DType> dtype = ir::ParseDType(name);
    if (!dtype.has_value() || (*dtype != ir::DType::kF32 && *dtype != ir::DType::kF16 &&
                               *dtype != ir::DType::kBF16 && *dtype != ir::DType::kF64)) {
      status =
          InvalidArgument("profile: dtype '{}' is not profiled; use f32, f16, bf16 or f64", name);
      return {};
    }
    dtypes.push_back(*dtype);
  }
  for (ir::DType dtype : dtypes) {
    for (int64_t size : options.matmul_sizes)
      plans.push_back(MatMulPlan(dtype, 1, size, size, size));
    for (const std::vector<int64_t>& s : options.skinny_matmuls) {
      if (s.size() != 4) {
        status = InvalidArgument("profile: a matmul shape is {{batch, m, k, n}}");
        return {};
      }
      plans.push_back(MatMulPlan(dtype, s[0], s[1], s[2], s[3]));
    }
  }
  for (ir::DType dtype : dtypes) {
    if (dtype == ir::DType::kF64) continue;  // the reference loop, not a throughput worth keeping
    for (const std::vector<int64_t>& s : options.convolutions) {
      if (s.size() != 7) {
        status =
            InvalidArgument("profile: a convolution shape is {{N, C_in, H, W, C_out, KH, KW}}");
        return {};
      }
      plans.push_back(ConvolutionPlan(dtype, s));
    }
  }
  for (int64_t bytes : options.elementwise_bytes) plans.push_back(ElementwisePlan(bytes));
  plans.push_back(KernelLaunchPlan());
  if (options.devices >= 2) {
    auto timer = std::make_shared<std::unique_ptr<CollectiveTimer>>();
    for (const std::string& kind : ProfiledCollectives()) {
      for (int64_t bytes : options.collective_bytes) {
        if (CollectiveElements(bytes, options.devices) == 0) {
          status =
              InvalidArgument("profile: a {} of {} B has no f32 element per device", kind, bytes);
          return {};
        }
        plans.push_back(CollectivePlan(kind, bytes, options.devices, timer));
      }
    }
    if (CanTimeCoreRoundTrips()) plans.push_back(CoreRoundTripPlan());
  }
  return plans;
}

std::string OneDnnVersion() {
  const dnnl_version_t* version = dnnl_version();
  return fmt::format("{}.{}.{}", version->major, version->minor, version->patch);
}

// "a, b, c and 4 more": the names of figures[i] for i in `which`, the first few of them.
std::string FigureNames(const std::vector<Measurement>& figures, const std::vector<size_t>& which) {
  constexpr size_t kShown = 4;
  std::vector<std::string> names;
  for (size_t k = 0; k < which.size() && k < kShown; ++k) names.push_back(figures[which[k]].name);
  std::string text = fmt::format("{}", fmt::join(names, ", "));
  if (which.size() > kShown) text += fmt::format(" and {} more", which.size() - kShown);
  return text;
}

}  // namespace

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const size_t low = static_cast<size_t>(std::floor(position));
  const size_t high = std::min(low + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(low);
  return values[low] + fraction * (values[high] - values[low]);
}

double Median(std::vector<double> values) { return Quantile(std::move(values), 0.5); }

double RelativeSpread(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double median = Median(values);
  if (median <= 0) return 0;
  return (Quantile(values, 0.9) - Quantile(values, 0.1)) / median;
}

double MedianUncertainty(std::vector<double> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  if (n < 2) return 0;
  std::sort(values.begin(), values.end());
  const double median = Median(values);
  if (median <= 0) return 0;
  // P(B < k) for B ~ Binomial(n, 1/2): the chance that fewer than k runs fall below the median.
  auto below = [n](int64_t k) {
    double sum = 0;
    for (int64_t j = 0; j < k; ++j) {
      sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0) -
                      static_cast<double>(n) * std::log(2.0));
    }
    return sum;
  };
  int64_t rank = 1;  // 1-based; the interval is [x(rank), x(n + 1 - rank)]
  while (rank + 1 <= (n + 1) / 2 && below(rank + 1) <= 0.025) ++rank;
  const double low = values[rank - 1];
  const double high = values[n - rank];
  return std::max(median - low, high - median) / median;
}

Status MeasureFigures(const std::vector<Sampler>& samplers, const MeasureSettings& settings,
                      std::vector<Measurement>& figures,
                      const std::function<void(const std::string&)>& progress) {
  // One run says nothing of how certain its median is.
  if (settings.repeats < 2) return InvalidArgument("repeats must be at least 2");
  if (settings.max_retries < 0) return InvalidArgument("max_retries must be at least 0");
  ALPA_CHECK(samplers.size() == figures.size(), "{} samplers for {} figures", samplers.size(),
             figures.size());
  std::vector<std::vector<double>> runs(figures.size());
  std::vector<size_t> pending(figures.size());  // the figures the next pass measures
  std::iota(pending.begin(), pending.end(), size_t{0});
  const double start = Now();
  for (int64_t pass = 0; pass <= settings.max_retries && !pending.empty(); ++pass) {
    if (progress && pass > 0) {
      progress(fmt::format(
          "measuring {} figure(s) again, their medians uncertain by more than {:.1f}% (pass {} of "
          "at most {}): {}",
          pending.size(), settings.max_uncertainty * 100, pass + 1, settings.max_retries + 1,
          FigureNames(figures, pending)));
    }
    const double pass_start = Now();
    for (int64_t round = 1; round <= settings.repeats; ++round) {
      for (size_t i : pending) {
        Result<double> seconds = samplers[i]();
        if (!seconds.ok()) return seconds.status().WithContext(figures[i].name);
        runs[i].push_back(*seconds);
      }
      if (progress) {
        const double per_round = (Now() - pass_start) / static_cast<double>(round);
        progress(fmt::format("round {}/{} of {} figure(s): {:.0f} s in all, about {:.0f} s to go",
                             round, settings.repeats, pending.size(), Now() - start,
                             per_round * static_cast<double>(settings.repeats - round)));
      }
    }
    std::vector<size_t> uncertain;
    for (size_t i : pending) {
      figures[i].retries = pass;
      if (MedianUncertainty(runs[i]) > settings.max_uncertainty) uncertain.push_back(i);
    }
    pending = std::move(uncertain);
  }
  for (size_t i = 0; i < figures.size(); ++i) {
    figures[i].median_s = Median(runs[i]);
    figures[i].spread = RelativeSpread(runs[i]);
    figures[i].uncertainty = MedianUncertainty(runs[i]);
    figures[i].flagged = figures[i].uncertainty > settings.max_uncertainty;
    figures[i].runs = std::move(runs[i]);
  }
  return Status::Ok();
}

Result<Sampler> MakeBatchSampler(BatchTimer timer, double min_run_seconds,
                                 int64_t* iterations_per_run) {
  // Warm-up: JIT compilation, page faults, caches.
  ALPA_RETURN_IF_ERROR(timer(1).status());
  // Calibration: time one call, then a batch sized from it, and size runs from the batch.
  ALPA_ASSIGN_OR_RETURN(const double elapsed, timer(1));
  int64_t iterations = 1;
  if (elapsed < min_run_seconds) {
    const int64_t batch = std::clamp<int64_t>(
        static_cast<int64_t>(std::ceil(min_run_seconds / 4 / std::max(elapsed, 1e-9))), 1,
        int64_t{1} << 20);
    ALPA_ASSIGN_OR_RETURN(const double batch_seconds, timer(batch));
    const double per_call = std::max(batch_seconds / static_cast<double>(batch), 1e-9);
    iterations = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(min_run_seconds / per_call)), 1,
                                     int64_t{1} << 24);
  }
  if (iterations_per_run != nullptr) *iterations_per_run = iterations;
  return Sampler([timer = std::move(timer), iterations]() -> Result<double> {
    ALPA_ASSIGN_OR_RETURN(const double seconds, timer(iterations));
    return seconds / static_cast<double>(iterations);
  });
}

Result<Sampler> MakeTimedSampler(std::function<Status()> operation, double min_run_seconds,
                                 int64_t* iterations_per_run) {
  return MakeBatchSampler(
      [operation = std::move(operation)](int64_t count) -> Result<double> {
        const double begin = Now();
        for (int64_t i = 0; i < count; ++i) ALPA_RETURN_IF_ERROR(operation());
        return Now() - begin;
      },
      min_run_seconds, iterations_per_run);
}

ProfileOptions QuickProfileOptions() {
  ProfileOptions options;
  options.measure.repeats = 3;
  options.measure.max_retries = 1;
  options.min_run_seconds = 0.002;
  options.matmul_sizes = {64, 128};
  options.skinny_matmuls = {{1, 256, 64, 16}};
  options.convolutions = {{2, 8, 16, 16, 8, 3, 3}};
  options.elementwise_bytes = {int64_t{64} << 10, int64_t{1} << 20};
  options.collective_bytes = {int64_t{4} << 10, int64_t{256} << 10};
  return options;
}

int64_t ThreadsPerDevice(int64_t devices) {
  const int64_t count = std::max<int64_t>(1, devices);
  return static_cast<int64_t>(DeviceCores(0, count, AllowedCores()).size());
}

std::string FormatThroughput(const Measurement& measurement) {
  if (measurement.kind == kKernelLaunchKind) {
    return fmt::format("{:.2f} us a kernel", measurement.median_s / measurement.work * 1e6);
  }
  double value = measurement.Throughput();
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P"};
  size_t prefix = 0;
  while (value >= 1000 && prefix + 1 < std::size(kPrefixes)) {
    value /= 1000;
    ++prefix;
  }
  return fmt::format("{:.1f} {}{}/s", value, kPrefixes[prefix], measurement.unit);
}

Result<ProfileDatabase> RunProfile(const ProfileOptions& options) {
  if (options.devices < 1) {
    return InvalidArgument("profile: the number of devices must be at least 1, found {}",
                           options.devices);
  }
  if (options.placements < 1) {
    return InvalidArgument("profile: placements must be at least 1, found {}", options.placements);
  }
  if (options.measure.repeats < 2) {
    return InvalidArgument("profile: repeats must be at least 2, found {}",
                           options.measure.repeats);
  }
  Status status;
  std::vector<Plan> plans = Plans(options, status);
  ALPA_RETURN_IF_ERROR(status);

  ProfileDatabase database;
  database.cluster = options.cluster_name;
  const unsigned hardware = std::thread::hardware_concurrency();
  database.hardware_threads = hardware == 0 ? 1 : hardware;
  database.devices = options.devices;
  database.threads_per_device = ThreadsPerDevice(options.devices);
  database.onednn_version = OneDnnVersion();
  database.settings = options.measure;
  database.min_run_seconds = options.min_run_seconds;
  database.placements = options.placements;

  // Every figure's sampler is prepared (buffers allocated, warmed up, calibrated) before the
  // rounds start, and all of them live until the rounds end.
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(static_cast<int>(database.threads_per_device));
  Status measured = [&]() -> Status {
    std::vector<Sampler> samplers;
    for (size_t i = 0; i < plans.size(); ++i) {
      if (options.progress && i % 10 == 0) {
        options.progress(fmt::format("preparing figures {} to {} of {}", i + 1,
                                     std::min(i + 10, plans.size()), plans.size()));
      }
      Measurement& figure = database.measurements.emplace_back(plans[i].figure);
      ALPA_ASSIGN_OR_RETURN(Sampler sampler, plans[i].prepare(options, figure));
      samplers.push_back(std::move(sampler));
    }
    ALPA_RETURN_IF_ERROR(
        MeasureFigures(samplers, options.measure, database.measurements, options.progress));
    // The core round trip was measured like a figure, to be taken in the same rounds as the
    // collectives it explains; it is a fact about the machine, not a figure the cost model uses.
    auto probe = std::find_if(database.measurements.begin(), database.measurements.end(),
                              [](const Measurement& m) { return m.kind == kCoreRoundTripKind; });
    if (probe != database.measurements.end()) {
      database.core_round_trips_s = std::move(probe->runs);
      database.measurements.erase(probe);
    }
    return Status::Ok();
  }();
  omp_set_num_threads(saved_threads);
  ALPA_RETURN_IF_ERROR(measured);
  database.collectives_measured = options.devices >= 2 && !options.collective_bytes.empty();
  database.collectives_reason = database.collectives_measured ? ""
                                : options.devices < 2         ? kCollectivesOneDevice
                                                              : kCollectivesNotRequested;
  if (options.progress && !database.collectives_measured) {
    options.progress(fmt::format("collectives: {}", database.collectives_reason));
  }
  DeriveFigures(database);
  return database;
}

}  // namespace alpa::runtime
