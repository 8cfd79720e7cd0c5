#include "runtime/profiler.h"

#include <fmt/format.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include "ir/dtype.h"
#include "kernels/convolution.h"
#include "kernels/matmul.h"
#include "runtime/collective_profiler.h"
#include "runtime/profile_database.h"

namespace alpa::runtime {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A buffer of `elements` values of `dtype`, every one 0.5 (small enough that no product or sum of
// the profiled shapes overflows, in any of the dtypes).
std::vector<uint64_t> FilledBuffer(ir::DType dtype, int64_t elements) {
  const int64_t bytes = elements * ir::DTypeByteSize(dtype);
  std::vector<uint64_t> buffer(static_cast<size_t>((bytes + 7) / 8));
  auto* data = reinterpret_cast<unsigned char*>(buffer.data());
  switch (dtype) {
    case ir::DType::kF32:
      std::fill_n(reinterpret_cast<float*>(data), elements, 0.5f);
      break;
    case ir::DType::kF64:
      std::fill_n(reinterpret_cast<double*>(data), elements, 0.5);
      break;
    case ir::DType::kF16:
      std::fill_n(reinterpret_cast<uint16_t*>(data), elements, uint16_t{0x3800});
      break;
    case ir::DType::kBF16:
      std::fill_n(reinterpret_cast<uint16_t*>(data), elements, uint16_t{0x3F00});
      break;
    default:
      break;  // zeros
  }
  return buffer;
}

// "64 MiB", "4 KiB" or "100 B".
std::string BytesText(int64_t bytes) {
  if (bytes % (int64_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

// One figure to measure: its description and how to run it.
struct Plan {
  Measurement figure;
  // Allocates the buffers, builds the sampler and measures into `figure`.
  std::function<Status(const ProfileOptions&, Measurement&)> measure;
};

Status MeasureOperation(const std::function<Status()>& operation, const ProfileOptions& options,
                        Measurement& figure) {
  Result<Sampler> sampler =
      MakeTimedSampler(operation, options.min_run_seconds, &figure.iterations_per_run);
  if (!sampler.ok()) return sampler.status().WithContext(figure.name);
  return MeasureFigure(*sampler, options.measure, figure).WithContext(figure.name);
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
  plan.measure = [=](const ProfileOptions& options, Measurement& figure) {
    std::vector<uint64_t> a = FilledBuffer(dtype, batch * m * k);
    std::vector<uint64_t> b = FilledBuffer(dtype, batch * k * n);
    std::vector<uint64_t> c = FilledBuffer(dtype, batch * m * n);
    return MeasureOperation(
        [&] { return kernels::BatchMatMul(dtype, batch, m, k, n, a.data(), b.data(), c.data()); },
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
  plan.measure = [=](const ProfileOptions& options, Measurement& figure) {
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
    std::vector<uint64_t> input = FilledBuffer(dtype, batch * in * h * w);
    std::vector<uint64_t> kernel = FilledBuffer(dtype, out * in * kh * kw);
    std::vector<uint64_t> output = FilledBuffer(dtype, batch * out * h * w);
    return MeasureOperation(
        [&] {
          return kernels::Convolution(dtype, params, input.data(), kernel.data(), output.data());
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
  plan.measure = [=](const ProfileOptions& options, Measurement& figure) {
    std::vector<float> a(elements, 0.5f), b(elements, 0.25f), c(elements, 0.0f);
    const float* pa = a.data();
    const float* pb = b.data();
    float* pc = c.data();
    return MeasureOperation(
        [=] {
#pragma omp parallel for schedule(static)
          for (int64_t i = 0; i < elements; ++i) pc[i] = pa[i] + pb[i];
          return Status::Ok();
        },
        options, figure);
  };
  return plan;
}

// `timer` is shared by every collective plan and started by the first (its helper threads live
// until the plans are gone).
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
  plan.measure = [=](const ProfileOptions& options, Measurement& figure) {
    if (*timer == nullptr) *timer = std::make_unique<CollectiveTimer>(devices);
    CollectiveTimer* running = timer->get();
    Result<Sampler> sampler =
        MakeBatchSampler([=](int64_t count) { return running->Time(kind, elements, count); },
                         options.min_run_seconds, &figure.iterations_per_run);
    if (!sampler.ok()) return sampler.status().WithContext(figure.name);
    return MeasureFigure(*sampler, options.measure, figure).WithContext(figure.name);
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
  }
  return plans;
}

std::string OneDnnVersion() {
  const dnnl_version_t* version = dnnl_version();
  return fmt::format("{}.{}.{}", version->major, version->minor, version->patch);
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

Status MeasureFigure(const Sampler& sample, const MeasureSettings& settings, Measurement& figure) {
  if (settings.repeats < 1) return InvalidArgument("repeats must be at least 1");
  if (settings.max_retries < 0) return InvalidArgument("max_retries must be at least 0");
  bool have_best = false;
  std::vector<double> best_runs;
  double best_spread = 0;
  for (int64_t attempt = 0; attempt <= settings.max_retries; ++attempt) {
    std::vector<double> runs;
    runs.reserve(settings.repeats);
    for (int64_t i = 0; i < settings.repeats; ++i) {
      Result<double> seconds = sample();
      if (!seconds.ok()) return seconds.status();
      runs.push_back(*seconds);
    }
    const double spread = RelativeSpread(runs);
    if (!have_best || spread < best_spread) {
      have_best = true;
      best_runs = runs;
      best_spread = spread;
    }
    figure.retries = attempt;
    if (spread <= settings.max_relative_spread) {
      // Within the limit: this attempt is the figure.
      best_runs = std::move(runs);
      best_spread = spread;
      break;
    }
  }
  figure.runs = best_runs;
  figure.median_s = Median(best_runs);
  figure.spread = best_spread;
  figure.flagged = best_spread > settings.max_relative_spread;
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
  const unsigned hardware = std::thread::hardware_concurrency();
  const int64_t threads = hardware == 0 ? 1 : static_cast<int64_t>(hardware);
  return std::max<int64_t>(1, threads / std::max<int64_t>(1, devices));
}

std::string FormatThroughput(const Measurement& measurement) {
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
  if (options.measure.repeats < 1) {
    return InvalidArgument("profile: repeats must be at least 1, found {}",
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

  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(static_cast<int>(database.threads_per_device));
  for (size_t i = 0; i < plans.size(); ++i) {
    Measurement figure = plans[i].figure;
    Status measured = plans[i].measure(options, figure);
    if (!measured.ok()) {
      omp_set_num_threads(saved_threads);
      return measured;
    }
    if (options.progress) {
      std::string line = fmt::format("[{}/{}] {}: {} ± {:.1f}%", i + 1, plans.size(), figure.name,
                                     FormatThroughput(figure), figure.spread * 100);
      if (figure.flagged) {
        line += fmt::format("  FLAGGED: spread above {:.1f}% after {} re-measurements; not used",
                            options.measure.max_relative_spread * 100, figure.retries);
      } else if (figure.retries > 0) {
        line += fmt::format("  (re-measured {}x)", figure.retries);
      }
      options.progress(line);
    }
    database.measurements.push_back(std::move(figure));
  }
  omp_set_num_threads(saved_threads);
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
