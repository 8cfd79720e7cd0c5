#include "runtime/profile_database.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <nlohmann/json.hpp>

#include "runtime/collective_profiler.h"
#include "runtime/kernel_launch.h"
#include "support/file.h"
#include "support/json_text.h"

namespace alpa::runtime {
namespace {

constexpr char kFormatName[] = "alpa-profile";
constexpr char kUncertaintyDefinition[] =
    "the larger side of the median's distribution-free 95% confidence interval, over the median";

Result<double> NonNegativeField(const Json& object, const std::string& path,
                                const std::string& key) {
  ALPA_ASSIGN_OR_RETURN(double value, JsonNumber(object, path, key));
  if (value < 0)
    return InvalidArgument("{}: must not be negative, found {}", JsonPath(path, key), value);
  return value;
}

Result<int64_t> IntegerField(const Json& object, const std::string& path, const std::string& key,
                             int64_t minimum) {
  ALPA_ASSIGN_OR_RETURN(const int64_t integer, JsonInteger(object, path, key));
  if (integer < minimum) {
    return InvalidArgument("{}: must be at least {}, found {}", JsonPath(path, key), minimum,
                           integer);
  }
  return integer;
}

// A non-empty list of non-negative numbers (seconds).
Result<std::vector<double>> SecondsList(const Json& object, const std::string& path,
                                        const std::string& key) {
  ALPA_ASSIGN_OR_RETURN(const Json* list, JsonField(object, path, key));
  if (!list->is_array() || list->empty()) {
    return InvalidArgument("{}: must be a non-empty list of seconds", JsonPath(path, key));
  }
  std::vector<double> seconds;
  for (size_t i = 0; i < list->size(); ++i) {
    if (!(*list)[i].is_number() || (*list)[i].get<double>() < 0) {
      return InvalidArgument("{}[{}]: must be a non-negative number, found {}", JsonPath(path, key),
                             i, (*list)[i].dump());
    }
    seconds.push_back((*list)[i].get<double>());
  }
  return seconds;
}

Result<Measurement> ReadMeasurement(const Json& json, const std::string& path) {
  ALPA_RETURN_IF_ERROR(CheckJsonObject(
      json, path,
      {"kind", "name", "dtype", "shape", "work", "unit", "median_s", "spread", "uncertainty",
       "throughput", "runs", "iterations_per_run", "retries", "flagged"},
      "the profile"));
  Measurement m;
  ALPA_ASSIGN_OR_RETURN(m.kind, JsonString(json, path, "kind"));
  if (m.kind != "matmul" && m.kind != "convolution" && m.kind != "elementwise" &&
      m.kind != kKernelLaunchKind && !IsProfiledCollective(m.kind)) {
    return InvalidArgument(
        "{}.kind: expected 'matmul', 'convolution', 'elementwise', '{}' or a collective ({}), "
        "found '{}'",
        path, kKernelLaunchKind, fmt::join(ProfiledCollectives(), ", "), m.kind);
  }
  ALPA_ASSIGN_OR_RETURN(m.name, JsonString(json, path, "name"));
  ALPA_ASSIGN_OR_RETURN(m.dtype, JsonString(json, path, "dtype"));
  ALPA_ASSIGN_OR_RETURN(const Json* shape, JsonField(json, path, "shape"));
  if (!shape->is_array()) return InvalidArgument("{}.shape: must be a list of sizes", path);
  for (size_t i = 0; i < shape->size(); ++i) {
    if (!(*shape)[i].is_number_integer() || (*shape)[i].get<int64_t>() < 0) {
      return InvalidArgument("{}.shape[{}]: must be a non-negative integer, found {}", path, i,
                             (*shape)[i].dump());
    }
    m.shape.push_back((*shape)[i].get<int64_t>());
  }
  ALPA_ASSIGN_OR_RETURN(m.work, NonNegativeField(json, path, "work"));
  ALPA_ASSIGN_OR_RETURN(m.unit, JsonString(json, path, "unit"));
  if (m.unit != "FLOP" && m.unit != "B" && m.unit != "kernel") {
    return InvalidArgument("{}.unit: expected 'FLOP', 'B' or 'kernel', found '{}'", path, m.unit);
  }
  ALPA_ASSIGN_OR_RETURN(m.median_s, JsonNumber(json, path, "median_s"));
  if (m.median_s <= 0) {
    return InvalidArgument("{}.median_s: must be a positive number, found {}", path, m.median_s);
  }
  ALPA_ASSIGN_OR_RETURN(m.spread, NonNegativeField(json, path, "spread"));
  ALPA_ASSIGN_OR_RETURN(m.uncertainty, NonNegativeField(json, path, "uncertainty"));
  if (json.contains("throughput")) {
    ALPA_RETURN_IF_ERROR(JsonNumber(json, path, "throughput").status());
  }
  ALPA_ASSIGN_OR_RETURN(m.runs, SecondsList(json, path, "runs"));
  ALPA_ASSIGN_OR_RETURN(m.iterations_per_run, IntegerField(json, path, "iterations_per_run", 1));
  ALPA_ASSIGN_OR_RETURN(m.retries, IntegerField(json, path, "retries", 0));
  ALPA_ASSIGN_OR_RETURN(m.flagged, JsonBool(json, path, "flagged"));
  return m;
}

Result<ProfileDatabase> ReadProfile(const Json& json) {
  ALPA_RETURN_IF_ERROR(CheckJsonObject(json, "",
                                       {"format", "version", "cluster", "machine", "settings",
                                        "measurements", "derived", "collectives"},
                                       "the profile"));
  ALPA_ASSIGN_OR_RETURN(std::string format, JsonString(json, "", "format"));
  if (format != kFormatName) {
    return InvalidArgument("format: expected '{}', found '{}'", kFormatName, format);
  }
  ALPA_ASSIGN_OR_RETURN(int64_t version, IntegerField(json, "", "version", 0));
  if (version != kProfileFormatVersion) {
    return InvalidArgument(
        "version: this build reads version {}, found {}; profile again{}", kProfileFormatVersion,
        version,
        version < kProfileFormatVersion
            ? " (versions 1 and 2 measured each figure's runs back to back and flagged by spread)"
            : "");
  }
  ProfileDatabase db;
  ALPA_ASSIGN_OR_RETURN(db.cluster, JsonString(json, "", "cluster"));

  ALPA_ASSIGN_OR_RETURN(const Json* machine, JsonField(json, "", "machine"));
  ALPA_RETURN_IF_ERROR(CheckJsonObject(
      *machine, "machine",
      {"hardware_threads", "devices", "threads_per_device", "onednn_version", "core_round_trip_s"},
      "the profile"));
  ALPA_ASSIGN_OR_RETURN(db.hardware_threads,
                        IntegerField(*machine, "machine", "hardware_threads", 1));
  ALPA_ASSIGN_OR_RETURN(db.devices, IntegerField(*machine, "machine", "devices", 1));
  ALPA_ASSIGN_OR_RETURN(db.threads_per_device,
                        IntegerField(*machine, "machine", "threads_per_device", 1));
  ALPA_ASSIGN_OR_RETURN(db.onednn_version, JsonString(*machine, "machine", "onednn_version"));
  if (machine->contains("core_round_trip_s")) {
    ALPA_ASSIGN_OR_RETURN(db.core_round_trips_s,
                          SecondsList(*machine, "machine", "core_round_trip_s"));
  }

  ALPA_ASSIGN_OR_RETURN(const Json* settings, JsonField(json, "", "settings"));
  ALPA_RETURN_IF_ERROR(CheckJsonObject(*settings, "settings",
                                       {"repeats", "max_uncertainty", "max_retries",
                                        "min_run_seconds", "spread", "uncertainty", "placements"},
                                       "the profile"));
  ALPA_ASSIGN_OR_RETURN(db.settings.repeats, IntegerField(*settings, "settings", "repeats", 2));
  ALPA_ASSIGN_OR_RETURN(db.settings.max_uncertainty,
                        NonNegativeField(*settings, "settings", "max_uncertainty"));
  ALPA_ASSIGN_OR_RETURN(db.settings.max_retries,
                        IntegerField(*settings, "settings", "max_retries", 0));
  ALPA_ASSIGN_OR_RETURN(db.min_run_seconds,
                        NonNegativeField(*settings, "settings", "min_run_seconds"));
  ALPA_RETURN_IF_ERROR(JsonString(*settings, "settings", "spread").status());
  ALPA_RETURN_IF_ERROR(JsonString(*settings, "settings", "uncertainty").status());
  if (settings->contains("placements")) {
    ALPA_ASSIGN_OR_RETURN(db.placements, IntegerField(*settings, "settings", "placements", 1));
  }

  ALPA_ASSIGN_OR_RETURN(const Json* measurements, JsonField(json, "", "measurements"));
  if (!measurements->is_array()) {
    return InvalidArgument("measurements: must be a list, found {}", measurements->type_name());
  }
  for (size_t i = 0; i < measurements->size(); ++i) {
    const std::string path = fmt::format("measurements[{}]", i);
    ALPA_ASSIGN_OR_RETURN(Measurement m, ReadMeasurement((*measurements)[i], path));
    for (const Measurement& other : db.measurements) {
      if (other.name == m.name) {
        return InvalidArgument("{}.name: '{}' appears twice", path, m.name);
      }
    }
    db.measurements.push_back(std::move(m));
  }

  ALPA_ASSIGN_OR_RETURN(const Json* collectives, JsonField(json, "", "collectives"));
  ALPA_RETURN_IF_ERROR(
      CheckJsonObject(*collectives, "collectives", {"measured", "reason", "kinds"}, "the profile"));
  ALPA_ASSIGN_OR_RETURN(db.collectives_measured, JsonBool(*collectives, "collectives", "measured"));
  ALPA_ASSIGN_OR_RETURN(db.collectives_reason, JsonString(*collectives, "collectives", "reason"));

  // The derived figures must be what the measurements give.
  DeriveFigures(db);
  ALPA_ASSIGN_OR_RETURN(const Json* derived, JsonField(json, "", "derived"));
  ALPA_RETURN_IF_ERROR(CheckJsonObject(
      *derived, "derived", {"peak_flops", "memory_bandwidth", "kernel_launch_s", "collectives"},
      "the profile"));
  auto agrees = [](double a, double b) {
    return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
  };
  ALPA_ASSIGN_OR_RETURN(const Json* peaks, JsonField(*derived, "derived", "peak_flops"));
  if (!peaks->is_object()) return InvalidArgument("derived.peak_flops: must be an object");
  for (const auto& [dtype, value] : peaks->items()) {
    const std::string path = "derived.peak_flops." + dtype;
    if (!value.is_number()) return InvalidArgument("{}: must be a number", path);
    auto it = db.peak_flops.find(dtype);
    if (it == db.peak_flops.end() || !agrees(it->second, value.get<double>())) {
      return InvalidArgument("{}: {:.6g} is not what the measurements give ({:.6g}); profile again",
                             path, value.get<double>(),
                             it == db.peak_flops.end() ? 0.0 : it->second);
    }
  }
  for (const auto& [dtype, value] : db.peak_flops) {
    if (!peaks->contains(dtype)) {
      return InvalidArgument("derived.peak_flops: missing key '{}' (the measurements give {:.6g})",
                             dtype, value);
    }
  }
  ALPA_ASSIGN_OR_RETURN(double bandwidth,
                        NonNegativeField(*derived, "derived", "memory_bandwidth"));
  if (!agrees(bandwidth, db.memory_bandwidth)) {
    return InvalidArgument(
        "derived.memory_bandwidth: {:.6g} is not what the measurements give ({:.6g}); profile "
        "again",
        bandwidth, db.memory_bandwidth);
  }
  double launch = 0;
  if (derived->contains("kernel_launch_s")) {
    ALPA_ASSIGN_OR_RETURN(launch, NonNegativeField(*derived, "derived", "kernel_launch_s"));
  }
  if (!agrees(launch, db.kernel_launch_s)) {
    return InvalidArgument(
        "derived.kernel_launch_s: {:.6g} is not what the measurements give ({:.6g}); profile again",
        launch, db.kernel_launch_s);
  }
  if (!derived->contains("collectives")) {
    if (db.collectives.empty()) return db;
    return InvalidArgument(
        "derived: missing key 'collectives' (the measurements give figures for "
        "{} kinds)",
        db.collectives.size());
  }
  const Json& fits = (*derived)["collectives"];
  if (!fits.is_object()) return InvalidArgument("derived.collectives: must be an object");
  for (const auto& [kind, value] : fits.items()) {
    const std::string path = "derived.collectives." + kind;
    ALPA_RETURN_IF_ERROR(CheckJsonObject(value, path, {"latency_s", "bandwidth"}, "the profile"));
    ALPA_ASSIGN_OR_RETURN(const double latency, NonNegativeField(value, path, "latency_s"));
    ALPA_ASSIGN_OR_RETURN(const double bandwidth, NonNegativeField(value, path, "bandwidth"));
    auto it = db.collectives.find(kind);
    if (it == db.collectives.end() || !agrees(it->second.latency_s, latency) ||
        !agrees(it->second.bandwidth, bandwidth)) {
      return InvalidArgument("{}: not what the measurements give; profile again", path);
    }
  }
  for (const auto& [kind, fit] : db.collectives) {
    if (!fits.contains(kind)) {
      return InvalidArgument("derived.collectives: missing key '{}' (the measurements give one)",
                             kind);
    }
  }
  return db;
}

}  // namespace

void DeriveFigures(ProfileDatabase& database) {
  database.peak_flops.clear();
  database.memory_bandwidth = 0;
  // Peak per dtype: the matmul with the best throughput, and only when that figure is unflagged.
  // A slower size standing in for it would understate the peak by as much as the sizes differ
  // (f16 on the project's machines: 90 GFLOP/s at 256^3, 140 at 1024^3), so the peak would change
  // with which sizes a profile happened to flag.
  std::map<std::string, const Measurement*> best;
  for (const Measurement& m : database.measurements) {
    if (m.kind != "matmul" || m.median_s <= 0) continue;
    const Measurement*& kept = best[m.dtype];
    if (kept == nullptr || m.Throughput() > kept->Throughput()) kept = &m;
  }
  for (const auto& [dtype, m] : best) {
    if (!m->flagged) database.peak_flops[dtype] = m->Throughput();
  }
  // Memory bandwidth: the elementwise figure with the largest working set, and only when it is
  // unflagged (smaller sizes fit in caches, so falling back to one would overstate the bandwidth).
  const Measurement* largest = nullptr;
  for (const Measurement& m : database.measurements) {
    if (m.kind == "elementwise" && (largest == nullptr || m.work > largest->work)) largest = &m;
  }
  if (largest != nullptr && !largest->flagged && largest->median_s > 0) {
    database.memory_bandwidth = largest->Throughput();
  }
  database.kernel_launch_s = 0;
  for (const Measurement& m : database.measurements) {
    if (m.kind == kKernelLaunchKind && !m.flagged && m.work > 0) {
      database.kernel_launch_s = m.median_s / m.work;
    }
  }
  // Collectives: alpha from the smallest size, 1/beta from the largest (format above), and only
  // when both are unflagged: a neighbouring size standing in for a flagged one would move alpha by
  // its transfer time, or 1/beta by cache effects, so the fit would change with which figures a
  // run happened to flag.
  database.collectives.clear();
  for (const std::string& kind : ProfiledCollectives()) {
    const Measurement* smallest = nullptr;
    const Measurement* biggest = nullptr;
    for (const Measurement& m : database.measurements) {
      if (m.kind != kind) continue;
      if (smallest == nullptr || m.work < smallest->work) smallest = &m;
      if (biggest == nullptr || m.work > biggest->work) biggest = &m;
    }
    if (smallest == nullptr || smallest->flagged || biggest->flagged || smallest->median_s <= 0 ||
        biggest->median_s <= 0) {
      continue;
    }
    CollectiveFit& fit = database.collectives[kind];
    fit.latency_s = smallest->median_s;
    const double transfer_s = biggest->median_s - fit.latency_s;
    fit.bandwidth =
        biggest != smallest && transfer_s > 0 ? biggest->work / transfer_s : biggest->Throughput();
  }
}

std::string ProfileJson(const ProfileDatabase& db) {
  Json json;
  json["format"] = kFormatName;
  json["version"] = kProfileFormatVersion;
  json["cluster"] = db.cluster;
  json["machine"] = {{"hardware_threads", db.hardware_threads},
                     {"devices", db.devices},
                     {"threads_per_device", db.threads_per_device},
                     {"onednn_version", db.onednn_version}};
  if (!db.core_round_trips_s.empty()) json["machine"]["core_round_trip_s"] = db.core_round_trips_s;
  json["settings"] = {{"repeats", db.settings.repeats},
                      {"max_uncertainty", db.settings.max_uncertainty},
                      {"max_retries", db.settings.max_retries},
                      {"min_run_seconds", db.min_run_seconds},
                      {"spread", "(p90 - p10) / median"},
                      {"uncertainty", kUncertaintyDefinition},
                      {"placements", db.placements}};
  Json measurements = Json::array();
  for (const Measurement& m : db.measurements) {
    measurements.push_back({{"kind", m.kind},
                            {"name", m.name},
                            {"dtype", m.dtype},
                            {"shape", m.shape},
                            {"work", m.work},
                            {"unit", m.unit},
                            {"median_s", m.median_s},
                            {"spread", m.spread},
                            {"uncertainty", m.uncertainty},
                            {"throughput", m.Throughput()},
                            {"runs", m.runs},
                            {"iterations_per_run", m.iterations_per_run},
                            {"retries", m.retries},
                            {"flagged", m.flagged}});
  }
  json["measurements"] = std::move(measurements);
  Json peaks = Json::object();
  for (const auto& [dtype, flops] : db.peak_flops) peaks[dtype] = flops;
  json["derived"] = {{"peak_flops", std::move(peaks)}, {"memory_bandwidth", db.memory_bandwidth}};
  if (db.kernel_launch_s > 0) json["derived"]["kernel_launch_s"] = db.kernel_launch_s;
  if (!db.collectives.empty()) {
    Json fits = Json::object();
    for (const auto& [kind, fit] : db.collectives) {
      fits[kind] = {{"latency_s", fit.latency_s}, {"bandwidth", fit.bandwidth}};
    }
    json["derived"]["collectives"] = std::move(fits);
  }
  json["collectives"] = {{"measured", db.collectives_measured},
                         {"reason", db.collectives_reason},
                         {"kinds", ProfiledCollectives()}};
  return json.dump(2) + "\n";
}

Result<ProfileDatabase> ParseProfileJson(std::string_view text, const std::string& source) {
  ALPA_ASSIGN_OR_RETURN(Json json, ParseJsonText(text, source));
  Result<ProfileDatabase> db = ReadProfile(json);
  if (!db.ok()) return db.status().WithContext(source);
  return db;
}

Result<ProfileDatabase> LoadProfile(const std::string& path) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseProfileJson(text, path);
}

Status SaveProfile(const ProfileDatabase& database, const std::string& path) {
  return WriteStringToFile(path, ProfileJson(database));
}

Status ApplyProfile(const ProfileDatabase& database, cluster::DeviceSpec& device) {
  if (database.peak_flops.empty() && database.memory_bandwidth <= 0 &&
      database.kernel_launch_s <= 0) {
    return FailedPrecondition(
        "the profile of {} has no unflagged figure to apply (every measurement was flagged or "
        "none was taken); profile again",
        database.cluster);
  }
  for (const auto& [dtype, flops] : database.peak_flops) {
    if (flops > 0) device.peak_flops[dtype] = flops;
  }
  if (database.memory_bandwidth > 0) device.memory_bandwidth = database.memory_bandwidth;
  if (database.kernel_launch_s > 0) device.kernel_launch_s = database.kernel_launch_s;
  return Status::Ok();
}

Status ApplyProfile(const ProfileDatabase& database, cluster::ClusterSpec& spec) {
  const double devices = static_cast<double>(database.devices);
  for (cluster::HostSpec& host : spec.hosts) {
    ALPA_RETURN_IF_ERROR(ApplyProfile(database, host.device));
    if (database.devices < 2) continue;
    host.intra_host.collectives.clear();
    for (const auto& [kind, fit] : database.collectives) {
      // The ring all-reduce takes two passes of P - 1 steps, every other kind one pass.
      const double steps = (kind == "all-reduce" ? 2.0 : 1.0) * (devices - 1);
      const cluster::LinkFigures figures{.bandwidth = steps / devices * fit.bandwidth,
                                         .latency = fit.latency_s / steps};
      if (kind == "all-reduce") {
        host.intra_host.bandwidth = figures.bandwidth;
        host.intra_host.latency = figures.latency;
      } else {
        host.intra_host.collectives[kind] = figures;
      }
    }
  }
  spec.note = fmt::format("figures: profiled ({})", database.cluster);
  return Status::Ok();
}

}  // namespace alpa::runtime
