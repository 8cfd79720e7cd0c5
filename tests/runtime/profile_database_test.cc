// The profile database: JSON round trip, load errors naming the file and JSON path, the derived
// figures (flagged figures never used) and ApplyProfile.
#include "runtime/profile_database.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cluster/device.h"
#include "cluster/presets.h"
#include "runtime/kernel_launch.h"

namespace alpa::runtime {
namespace {

using ::testing::HasSubstr;

Measurement Figure(const std::string& kind, const std::string& name, const std::string& dtype,
                   double work, double median_s, bool flagged = false) {
  Measurement m;
  m.kind = kind;
  m.name = name;
  m.dtype = dtype;
  const bool bytes = kind != "matmul" && kind != "convolution" && kind != kKernelLaunchKind;
  m.shape = kind == "elementwise" ? std::vector<int64_t>{int64_t(work / 12)}
            : bytes               ? std::vector<int64_t>{2, int64_t(work / 4)}
                                  : std::vector<int64_t>{1, 8, 8, 8};
  m.work = work;
  m.unit = kind == kKernelLaunchKind ? "kernel" : bytes ? "B" : "FLOP";
  m.median_s = median_s;
  m.runs = {median_s * 0.99, median_s, median_s * 1.01};
  m.spread = flagged ? 0.3 : 0.016;
  m.uncertainty = flagged ? 0.2 : 0.01;
  m.iterations_per_run = 4;
  m.retries = flagged ? 3 : 0;
  m.flagged = flagged;
  return m;
}

ProfileDatabase Sample() {
  ProfileDatabase db;
  db.cluster = "local:2";
  db.hardware_threads = 2;
  db.devices = 2;
  db.threads_per_device = 1;
  db.onednn_version = "2.6.0";
  db.core_round_trips_s = {480e-9, 470e-9, 495e-9};
  db.min_run_seconds = 0.05;
  db.measurements = {
      Figure("matmul", "matmul f32 512^3", "f32", 2.0e9, 0.02),          // 100 GFLOP/s
      Figure("matmul", "matmul f32 1024^3", "f32", 2.0e9, 0.01),         // 200 GFLOP/s
      Figure("matmul", "matmul f32 2048^3", "f32", 4.0e9, 0.025, true),  // 160, flagged
      Figure("matmul", "matmul f64 512^3", "f64", 2.0e9, 0.05),          // 40 GFLOP/s
      Figure("matmul", "matmul bf16 512^3", "bf16", 2.0e9, 0.1, true),   // only flagged
      Figure("convolution", "conv f32", "f32", 1.0e9, 0.001),            // 1 TFLOP/s: not a matmul
      Figure("elementwise", "add f32 1 MiB", "f32", 3.0e6, 1e-4),        // 30 GB/s (cache)
      Figure("elementwise", "add f32 64 MiB", "f32", 1.2e8, 1e-2),       // 12 GB/s
      // all-reduce: 4 KiB in 20 us, 64 MiB in 20 ms + 20 us: alpha 20 us, 1/beta 3.3554432 GB/s.
      Figure("all-reduce", "all-reduce f32 4 KiB x2", "f32", 4096, 20e-6),
      Figure("all-reduce", "all-reduce f32 1 MiB x2", "f32", 1 << 20, 1e-3, true),
      Figure("all-reduce", "all-reduce f32 64 MiB x2", "f32", 1 << 26, 20.02e-3),
      // all-gather: one size only, so 1/beta = B / t.
      Figure("all-gather", "all-gather f32 1 MiB x2", "f32", 1 << 20, 1e-3),
      Figure("reduce-scatter", "reduce-scatter f32 1 MiB x2", "f32", 1 << 20, 1e-3, true),
      // all-to-all: the smallest size is flagged, so no fit (1 MiB does not stand in for it).
      Figure("all-to-all", "all-to-all f32 4 KiB x2", "f32", 4096, 20e-6, true),
      Figure("all-to-all", "all-to-all f32 1 MiB x2", "f32", 1 << 20, 1e-3),
      Figure("all-to-all", "all-to-all f32 64 MiB x2", "f32", 1 << 26, 20.02e-3),
      // f16: the best size is flagged, so no peak (512^3 does not stand in for it).
      Figure("matmul", "matmul f16 512^3", "f16", 2.0e9, 0.04),          // 50 GFLOP/s
      Figure("matmul", "matmul f16 1024^3", "f16", 2.0e9, 0.025, true),  // 80, flagged
      Figure(kKernelLaunchKind, "kernel launch", "f32", 1, 0.2e-6),      // 0.2 us a kernel
  };
  db.collectives_measured = true;
  db.collectives_reason = "";
  DeriveFigures(db);
  return db;
}

TEST(ProfileDatabaseTest, DerivedFiguresUseUnflaggedFiguresOnly) {
  ProfileDatabase db = Sample();
  EXPECT_EQ(db.peak_flops.size(), 2u);
  EXPECT_DOUBLE_EQ(db.peak_flops.at("f32"), 200e9);
  EXPECT_DOUBLE_EQ(db.peak_flops.at("f64"), 40e9);
  EXPECT_EQ(db.peak_flops.count("bf16"), 0u);   // only flagged figures
  EXPECT_EQ(db.peak_flops.count("f16"), 0u);    // its best figure is flagged
  EXPECT_DOUBLE_EQ(db.memory_bandwidth, 12e9);  // the largest size, not the cached one
  EXPECT_DOUBLE_EQ(db.kernel_launch_s, 0.2e-6);
  // Collectives: the flagged middle size is skipped; reduce-scatter has only a flagged figure and
  // all-to-all a flagged smallest one.
  ASSERT_EQ(db.collectives.size(), 2u);
  EXPECT_EQ(db.collectives.count("all-to-all"), 0u);
  EXPECT_DOUBLE_EQ(db.collectives.at("all-reduce").latency_s, 20e-6);
  EXPECT_NEAR(db.collectives.at("all-reduce").bandwidth, (1 << 26) / 20e-3, 1);
  EXPECT_DOUBLE_EQ(db.collectives.at("all-gather").latency_s, 1e-3);
  EXPECT_DOUBLE_EQ(db.collectives.at("all-gather").bandwidth, (1 << 20) / 1e-3);
}

TEST(ProfileDatabaseTest, JsonRoundTrips) {
  ProfileDatabase db = Sample();
  const std::string text = ProfileJson(db);
  Result<ProfileDatabase> back = ParseProfileJson(text, "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, db);
  EXPECT_EQ(ProfileJson(*back), text);

  nlohmann::json json = nlohmann::json::parse(text);
  EXPECT_EQ(json["version"], kProfileFormatVersion);
  EXPECT_EQ(json["collectives"]["measured"], true);
  EXPECT_EQ(json["collectives"]["reason"], "");
  EXPECT_DOUBLE_EQ(json["derived"]["collectives"]["all-reduce"]["latency_s"].get<double>(), 20e-6);
  for (const auto& m : json["measurements"]) {
    EXPECT_TRUE(m.contains("spread")) << m.dump();
    EXPECT_TRUE(m.contains("flagged")) << m.dump();
  }
  EXPECT_DOUBLE_EQ(json["derived"]["peak_flops"]["f32"].get<double>(), 200e9);
  EXPECT_DOUBLE_EQ(json["derived"]["kernel_launch_s"].get<double>(), 0.2e-6);
}

// Profiles taken before the kernel-launch figure have none, and load; a flagged one derives none.
TEST(ProfileDatabaseTest, TheKernelLaunchIsOptionalAndNeverFlagged) {
  ProfileDatabase db = Sample();
  std::erase_if(db.measurements, [](const Measurement& m) { return m.kind == kKernelLaunchKind; });
  DeriveFigures(db);
  EXPECT_EQ(db.kernel_launch_s, 0);
  const std::string text = ProfileJson(db);
  EXPECT_FALSE(nlohmann::json::parse(text)["derived"].contains("kernel_launch_s"));
  Result<ProfileDatabase> back = ParseProfileJson(text, "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, db);

  ProfileDatabase flagged = Sample();
  for (Measurement& m : flagged.measurements) {
    if (m.kind == kKernelLaunchKind) m.flagged = true;
  }
  DeriveFigures(flagged);
  EXPECT_EQ(flagged.kernel_launch_s, 0);
  // A derived figure the measurements do not give is refused.
  nlohmann::json edited = nlohmann::json::parse(ProfileJson(Sample()));
  edited["derived"]["kernel_launch_s"] = 5e-6;
  EXPECT_THAT(ParseProfileJson(edited.dump(), "p.json").status().message(),
              HasSubstr("derived.kernel_launch_s: 5e-06 is not what the measurements give"));
}

// The placements of the memory-bound figures' buffers are recorded; a profile from before them
// has no such field and had one.
TEST(ProfileDatabaseTest, ThePlacementsAreRecorded) {
  ProfileDatabase db = Sample();
  db.placements = 4;
  nlohmann::json json = nlohmann::json::parse(ProfileJson(db));
  EXPECT_EQ(json["settings"]["placements"], 4);
  Result<ProfileDatabase> back = ParseProfileJson(json.dump(), "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->placements, 4);
  json["settings"].erase("placements");
  back = ParseProfileJson(json.dump(), "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->placements, 1);
  json["settings"]["placements"] = 0;
  EXPECT_THAT(ParseProfileJson(json.dump(), "p.json").status().message(),
              HasSubstr("p.json: settings.placements: must be at least 1, found 0"));
}

TEST(ProfileDatabaseTest, CoreRoundTripsAreOptional) {
  // Written only when taken (two devices or more), and a file without them loads.
  ProfileDatabase db = Sample();
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(ProfileJson(db))["machine"]["core_round_trip_s"][1],
                   470e-9);
  db.core_round_trips_s.clear();
  const std::string text = ProfileJson(db);
  EXPECT_FALSE(nlohmann::json::parse(text)["machine"].contains("core_round_trip_s"));
  Result<ProfileDatabase> back = ParseProfileJson(text, "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, db);
}

TEST(ProfileDatabaseTest, SaveAndLoad) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("alpa_profile_test_" + std::to_string(getpid()) + ".json"))
                               .string();
  ProfileDatabase db = Sample();
  ASSERT_TRUE(SaveProfile(db, path).ok());
  Result<ProfileDatabase> back = LoadProfile(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, db);

  Result<ProfileDatabase> missing = LoadProfile("/nonexistent/dir/p.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/dir/p.json"));
  Status unwritable = SaveProfile(db, "/nonexistent/dir/p.json");
  ASSERT_FALSE(unwritable.ok());
  EXPECT_THAT(unwritable.message(), HasSubstr("/nonexistent/dir/p.json"));
}

// Parses `Sample()` edited by `edit` and returns the error message ("" when it parsed).
template <typename Edit>
std::string ErrorAfter(Edit edit) {
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(ProfileJson(Sample()));
  edit(json);
  Result<ProfileDatabase> db = ParseProfileJson(json.dump(), "p.json");
  return db.ok() ? "" : db.status().message();
}

TEST(ProfileDatabaseTest, LoadErrorsNameTheFileAndPath) {
  Result<ProfileDatabase> syntax = ParseProfileJson("{\n  \"format\": ,\n}", "p.json");
  ASSERT_FALSE(syntax.ok());
  EXPECT_THAT(syntax.status().message(), HasSubstr("p.json:2:"));
  EXPECT_THAT(syntax.status().message(), HasSubstr("malformed JSON"));

  EXPECT_THAT(ErrorAfter([](auto& j) { j["version"] = 99; }),
              HasSubstr("p.json: version: this build reads version 3, found 99; profile again"));
  // Versions 1 and 2 flagged figures by the spread of runs taken back to back.
  EXPECT_THAT(ErrorAfter([](auto& j) { j["version"] = 2; }),
              HasSubstr("found 2; profile again (versions 1 and 2 measured each figure's runs "
                        "back to back and flagged by spread)"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["measurements"][1].erase("uncertainty"); }),
              HasSubstr("p.json: measurements[1]: missing key 'uncertainty'"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["format"] = "other"; }), HasSubstr("p.json: format:"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["measurements"][2]["median_s"] = -1; }),
              HasSubstr("p.json: measurements[2].median_s: must be a positive number"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["measurements"][1].erase("spread"); }),
              HasSubstr("p.json: measurements[1]: missing key 'spread'"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["measurements"][0]["flagged"] = "no"; }),
              HasSubstr("measurements[0].flagged: must be true or false"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["measurements"][0]["runs"][1] = "x"; }),
              HasSubstr("measurements[0].runs[1]:"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["measurements"][0]["kind"] = "fft"; }),
              HasSubstr("measurements[0].kind:"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["machine"]["speed"] = 1; }),
              HasSubstr("p.json: machine.speed: unknown key"));
  EXPECT_THAT(
      ErrorAfter([](auto& j) { j["machine"]["core_round_trip_s"] = nlohmann::json::array(); }),
      HasSubstr("p.json: machine.core_round_trip_s: must be a non-empty list of seconds"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["machine"]["core_round_trip_s"][0] = -1; }),
              HasSubstr("machine.core_round_trip_s[0]: must be a non-negative number, found -1"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["machine"]["devices"] = 0; }),
              HasSubstr("machine.devices: must be at least 1"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["settings"]["repeats"] = 1; }),
              HasSubstr("settings.repeats: must be at least 2"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j.erase("collectives"); }),
              HasSubstr("p.json: missing key 'collectives'"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["derived"]["peak_flops"]["f32"] = 1e15; }),
              HasSubstr("derived.peak_flops.f32: 1e+15 is not what the measurements give"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["derived"]["peak_flops"].erase("f64"); }),
              HasSubstr("derived.peak_flops: missing key 'f64'"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["measurements"][1]["name"] = "matmul f32 512^3"; }),
              HasSubstr("measurements[1].name: 'matmul f32 512^3' appears twice"));
  // Unflagging a figure by hand changes what the measurements give: the derived part disagrees.
  EXPECT_THAT(ErrorAfter([](auto& j) { j["measurements"][17]["flagged"] = false; }),
              HasSubstr("derived.peak_flops: missing key 'f16'"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["measurements"][1]["flagged"] = true; }),
              HasSubstr("derived.peak_flops.f32: 2e+11 is not what the measurements give (0)"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["measurements"][12]["flagged"] = false; }),
              HasSubstr("derived.collectives: missing key 'reduce-scatter'"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["measurements"][13]["flagged"] = false; }),
              HasSubstr("derived.collectives: missing key 'all-to-all'"));
  EXPECT_THAT(
      ErrorAfter([](auto& j) { j["derived"]["collectives"]["all-reduce"]["latency_s"] = 1; }),
      HasSubstr("derived.collectives.all-reduce: not what the measurements give"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["derived"].erase("collectives"); }),
              HasSubstr("derived: missing key 'collectives'"));
  EXPECT_THAT(ErrorAfter([](auto& j) { j["measurements"][8]["kind"] = "all-sum"; }),
              HasSubstr("measurements[8].kind: expected 'matmul', 'convolution', 'elementwise', "
                        "'kernel-launch' or a collective (all-reduce, all-gather, reduce-scatter, "
                        "all-to-all)"));
}

TEST(ProfileDatabaseTest, ApplyProfileReplacesAnalyticFigures) {
  ProfileDatabase db = Sample();
  cluster::DeviceSpec device = cluster::CpuCoreEstimate(int64_t{1} << 30);
  const double analytic_bf16 = device.PeakFlops("bf16");
  ASSERT_TRUE(ApplyProfile(db, device).ok());
  EXPECT_DOUBLE_EQ(device.PeakFlops("f32"), db.peak_flops.at("f32"));
  EXPECT_DOUBLE_EQ(device.PeakFlops("f64"), db.peak_flops.at("f64"));
  EXPECT_DOUBLE_EQ(device.PeakFlops("bf16"), analytic_bf16);  // only flagged figures: kept
  EXPECT_DOUBLE_EQ(device.memory_bandwidth, db.memory_bandwidth);
  EXPECT_DOUBLE_EQ(device.kernel_launch_s, 0.2e-6);

  Result<cluster::ClusterSpec> spec = cluster::ParseClusterArgument("local:2");
  ASSERT_TRUE(spec.ok());
  ASSERT_TRUE(ApplyProfile(db, *spec).ok());
  for (const cluster::HostSpec& host : spec->hosts) {
    EXPECT_DOUBLE_EQ(host.device.PeakFlops("f32"), 200e9);
  }
  EXPECT_THAT(spec->note, HasSubstr("profiled"));
  // The all-reduce fit over 2 devices (alpha 20 us, 3.3554432 GB/s) as a ring's link:
  // alpha / 2(P-1) per step, bus bandwidth 2(P-1)/P * bandwidth.
  // The all-gather fit (alpha 1 ms, 1 MiB per ms) as a one-pass ring's link figures of its own:
  // alpha / (P-1), (P-1)/P * bandwidth; the kinds without a fit have none.
  const CollectiveFit& all_gather = db.collectives.at("all-gather");
  for (const cluster::HostSpec& host : spec->hosts) {
    EXPECT_DOUBLE_EQ(host.intra_host.latency, 10e-6);
    EXPECT_DOUBLE_EQ(host.intra_host.bandwidth, db.collectives.at("all-reduce").bandwidth);
    ASSERT_EQ(host.intra_host.collectives.size(), 1u);
    EXPECT_EQ(host.intra_host.For("all-gather"),
              (cluster::LinkFigures{all_gather.bandwidth / 2, all_gather.latency_s}));
  }
  ProfileDatabase four = db;
  four.devices = 4;
  Result<cluster::ClusterSpec> local4 = cluster::ParseClusterArgument("local:4");
  ASSERT_TRUE(local4.ok());
  ASSERT_TRUE(ApplyProfile(four, *local4).ok());
  EXPECT_DOUBLE_EQ(local4->hosts[0].intra_host.latency, 20e-6 / 6);
  EXPECT_DOUBLE_EQ(local4->hosts[0].intra_host.bandwidth,
                   1.5 * db.collectives.at("all-reduce").bandwidth);
  const cluster::LinkFigures gather4 = local4->hosts[0].intra_host.For("all-gather");
  EXPECT_DOUBLE_EQ(gather4.latency, all_gather.latency_s / 3);
  EXPECT_DOUBLE_EQ(gather4.bandwidth, 0.75 * all_gather.bandwidth);
  EXPECT_TRUE(cluster::ValidateClusterSpec(*spec).ok());

  ProfileDatabase empty;
  empty.cluster = "local:2";
  Status status = ApplyProfile(empty, device);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("no unflagged figure"));
}

}  // namespace
}  // namespace alpa::runtime
