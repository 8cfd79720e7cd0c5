#include "plan/plan_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <png.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "pipeline/simulator.h"
#include "pipeline/trace_export.h"
#include "support/file.h"

namespace alpa::plan {
namespace {

using Json = nlohmann::ordered_json;

// Two stages on 2 hosts x 4 devices: stage 0 on host 0 fits its 16 GiB, stage 1 on host 1 needs
// 17 GiB. The model name and a parameter name carry characters HTML must escape.
Json TwoStagePlan() {
  return Json::parse(R"json({
    "format": "alpa-plan", "version": 2,
    "model": {"name": "gpt<&>\"tiny", "fingerprint": "0123456789abcdef"},
    "cluster": "p3.16xlarge:2x4",
    "cluster_shape": {"hosts": 2, "devices_per_host": 4, "device": "V100-SXM2-16GB",
                      "device_memory_bytes": 17179869184},
    "method": "pipeshard", "schedule": "1f1b", "num_micro_batches": 8, "micro_batch_size": 4,
    "estimate": {"step_time_s": 10.0, "pipeline_s": 9.5, "alpa_formula_s": 9.8,
                 "bubble_fraction": 0.125, "tflops": 42.5},
    "stages": [
      {"layers": [0, 5], "devices": [0, 1, 2, 3], "submesh": [1, 4], "logical_mesh": [2, 2],
       "mesh_config": "(1,4) as [2,2] dp", "force_batch_dim_to_mesh_dim": 0,
       "forward_time_s": 0.010, "backward_time_s": 0.020, "update_time_s": 0.005,
       "peak_memory_bytes": 12884901888, "device_memory_bytes": 17179869184,
       "memory": {"static_bytes": 8589934592, "activation_bytes_per_micro_batch": 1073741824,
                  "micro_batches_in_flight": 2, "temporary_bytes": 2147483648},
       "comm": {"all-reduce": 12, "all-gather": 4},
       "parameters": [{"name": "block0.w<q>", "sharding": "{devices=[1,4]<=[4]}"}]},
      {"layers": [6, 11], "devices": [4, 5, 6, 7], "submesh": [1, 4], "logical_mesh": [1, 4],
       "mesh_config": "(1,4) as [1,4]", "force_batch_dim_to_mesh_dim": null,
       "forward_time_s": 0.011, "backward_time_s": 0.022, "update_time_s": 0.006,
       "peak_memory_bytes": 18253611008, "device_memory_bytes": 17179869184,
       "memory": {"static_bytes": 12884901888, "activation_bytes_per_micro_batch": 2147483648,
                  "micro_batches_in_flight": 2, "temporary_bytes": 1073741824},
       "comm": {"all-reduce": 6},
       "parameters": [{"name": "block6.wq", "sharding": "{replicated}"}]}],
    "alternatives": [
      {"name": "data parallel", "dp": 8, "op": 1, "pp": 1, "step_time_s": 20.0, "error": ""},
      {"name": "best uniform grid point", "dp": 4, "op": 2, "pp": 1, "step_time_s": 15.0,
       "error": ""},
      {"name": "zero-3", "dp": 8, "op": 1, "pp": 1, "step_time_s": null,
       "error": "needs 40.0 GiB per device"}],
    "compile": {"total_s": 1.5, "layer_costs_s": 1.2, "stage_dp_s": 0.3, "distinct_layers": 3,
                "mesh_configs": 6, "intra_op_solves": 18, "candidates_evaluated": 40}
  })json");
}

// A real Gantt chart: the simulator on two stages, as `alpa plan --report` embeds it.
std::string Timeline() {
  pipeline::PipelineSpec spec;
  spec.stages.resize(2);
  spec.stages[0].forward_s = 0.010;
  spec.stages[0].backward_s = 0.020;
  spec.stages[1].forward_s = 0.011;
  spec.stages[1].backward_s = 0.022;
  spec.num_micro_batches = 8;
  Result<pipeline::SimulationResult> result = pipeline::SimulatePipeline(spec);
  EXPECT_TRUE(result.ok()) << result.status().message();
  return result.ok() ? pipeline::ToSvgGantt(*result) : "";
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + needle.size())) {
    ++count;
  }
  return count;
}

struct DeviceSquare {
  int stage = 0;
  std::string fill;
};

// device id -> its square's stage and fill, from the cluster picture.
std::map<int, DeviceSquare> DeviceSquares(const std::string& page) {
  static const std::regex kSquare(
      R"re(<rect class="device" data-device="(\d+)" data-stage="(-?\d+)"[^>]* fill="(#[0-9a-f]{6})")re");
  std::map<int, DeviceSquare> squares;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), kSquare);
       it != std::sregex_iterator(); ++it) {
    squares[std::stoi((*it)[1])] = {std::stoi((*it)[2]), (*it)[3]};
  }
  return squares;
}

TEST(PlanReportTest, IsOneSelfContainedHtmlPage) {
  const std::string page = RenderPlanReport(TwoStagePlan(), Timeline());
  EXPECT_TRUE(page.starts_with("<!DOCTYPE html>\n"));
  EXPECT_TRUE(page.ends_with("</html>\n"));
  // The only URLs are SVG namespace names, which are never fetched.
  static const std::regex kUrl(R"re(https?://)re");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), kUrl); it != std::sregex_iterator();
       ++it) {
    const size_t at = static_cast<size_t>(it->position());
    EXPECT_EQ(page.substr(at, 26), "http://www.w3.org/2000/svg") << page.substr(at, 60);
    EXPECT_EQ(page.substr(at - 7, 7), "xmlns=\"");
  }
  EXPECT_FALSE(std::regex_search(page, std::regex(R"re(\b(src|href)\s*=)re")));
  EXPECT_EQ(Count(page, "<script"), 0u);
  EXPECT_EQ(Count(page, "<link"), 0u);
}

TEST(PlanReportTest, SameDocumentGivesTheSameBytes) {
  const std::string timeline = Timeline();
  EXPECT_EQ(RenderPlanReport(TwoStagePlan(), timeline), RenderPlanReport(TwoStagePlan(), timeline));
}

TEST(PlanReportTest, SummaryShowsTheEstimateAndCompileTime) {
  const std::string page = RenderPlanReport(TwoStagePlan(), "");
  EXPECT_NE(page.find("p3.16xlarge:2x4: 2 hosts x 4 V100-SXM2-16GB (16.0 GiB each)"),
            std::string::npos);
  EXPECT_NE(page.find("method pipeshard"), std::string::npos);
  EXPECT_NE(page.find("schedule 1f1b"), std::string::npos);
  EXPECT_NE(page.find(">8 x 4<"), std::string::npos);
  EXPECT_NE(page.find(">10.0 s<"), std::string::npos);
  EXPECT_NE(page.find(">12.5%<"), std::string::npos);
  EXPECT_NE(page.find(">42.5<"), std::string::npos);
  EXPECT_NE(page.find("layer costs 1.20 s, stage DP 300 ms"), std::string::npos);
  EXPECT_NE(page.find("18 intra-op solves"), std::string::npos);
}

TEST(PlanReportTest, ClusterHasOneSquarePerDeviceInItsStageColour) {
  const std::map<int, DeviceSquare> squares =
      DeviceSquares(RenderPlanReport(TwoStagePlan(), Timeline()));
  ASSERT_EQ(squares.size(), 8u);
  ASSERT_NE(StageColor(0), StageColor(1));
  for (const auto& [device, square] : squares) {
    const int stage = device / 4;
    EXPECT_EQ(square.stage, stage) << "device " << device;
    EXPECT_EQ(square.fill, StageColor(stage)) << "device " << device;
  }
}

TEST(PlanReportTest, ClusterDrawsEveryHostAndTheLegend) {
  const std::string page = RenderPlanReport(TwoStagePlan(), "");
  EXPECT_EQ(Count(page, "<rect class=\"host\""), 2u);
  EXPECT_NE(page.find(">host 1</text>"), std::string::npos);
  EXPECT_NE(page.find("stage 0: layers 0..5, (1,4) as [2,2] dp</li>"), std::string::npos);
  EXPECT_NE(page.find("stage 1: layers 6..11, (1,4) as [1,4]</li>"), std::string::npos);
}

// A heterogeneous cluster: host 0 of 4 V100s, host 1 of 2 A100s (device ids 4 and 5).
TEST(PlanReportTest, HostsOfEachTypeHaveTheirOwnDeviceCount) {
  Json plan = TwoStagePlan();
  plan["cluster_shape"]["host_types"] = Json::parse(R"json([
    {"hosts": [0], "devices_per_host": 4, "device": "V100-SXM2-16GB",
     "device_memory_bytes": 17179869184},
    {"hosts": [1], "devices_per_host": 2, "device": "A100-SXM4-40GB",
     "device_memory_bytes": 42949672960}])json");
  plan["stages"][1]["devices"] = Json::array({4, 5});
  const std::string page = RenderPlanReport(plan, "");
  EXPECT_NE(page.find("1 host x 4 V100-SXM2-16GB (16.0 GiB each) + 1 host x 2 A100-SXM4-40GB "
                      "(40.0 GiB each)"),
            std::string::npos);
  const std::map<int, DeviceSquare> squares = DeviceSquares(page);
  ASSERT_EQ(squares.size(), 6u);
  EXPECT_EQ(squares.at(5).stage, 1);
}

TEST(PlanReportTest, DevicesInNoStageAreGrey) {
  Json plan = TwoStagePlan();
  plan["stages"].erase(size_t{1});
  const std::map<int, DeviceSquare> squares = DeviceSquares(RenderPlanReport(plan, ""));
  ASSERT_EQ(squares.size(), 8u);
  for (int device = 4; device < 8; ++device) {
    EXPECT_EQ(squares.at(device).stage, -1);
    EXPECT_NE(squares.at(device).fill, StageColor(0));
  }
}

TEST(PlanReportTest, StageColoursCycleThroughTheirPalette) {
  EXPECT_EQ(StageColor(0), StageColor(12));
  for (int stage = 1; stage < 12; ++stage) EXPECT_NE(StageColor(stage), StageColor(0));
}

TEST(PlanReportTest, EmbedsTheTimelineUnescaped) {
  const std::string timeline = Timeline();
  ASSERT_TRUE(timeline.starts_with("<svg"));
  const std::string page = RenderPlanReport(TwoStagePlan(), timeline);
  EXPECT_NE(page.find(timeline), std::string::npos);
  EXPECT_EQ(page.find("no timeline"), std::string::npos);
  EXPECT_NE(RenderPlanReport(TwoStagePlan(), "").find("no timeline"), std::string::npos);
}

TEST(PlanReportTest, MemoryBarPerStageWithOverCapacityInWarningColour) {
  const std::string page = RenderPlanReport(TwoStagePlan(), "");
  EXPECT_NE(page.find("<g class=\"mem-bar\" data-stage=\"0\">"), std::string::npos);
  EXPECT_NE(page.find("<g class=\"mem-bar mem-over\" data-stage=\"1\">"), std::string::npos);
  EXPECT_EQ(Count(page, "<rect class=\"mem-static\" x="), 2u);
  EXPECT_EQ(Count(page, "<rect class=\"mem-act\" x="), 2u);
  EXPECT_EQ(Count(page, "<rect class=\"mem-temp\" x="), 2u);
  EXPECT_EQ(Count(page, "<line class=\"mem-cap\""), 2u);
  // 8 + 2 x 1 + 2 = 12 GiB and 12 + 2 x 2 + 1 = 17 GiB of 16 GiB.
  EXPECT_NE(page.find("12.0 GiB of 16.0 GiB (75%)"), std::string::npos);
  EXPECT_NE(page.find("17.0 GiB of 16.0 GiB (106%), over capacity"), std::string::npos);
  EXPECT_NE(page.find("activations (2 micro-batches in flight x 1.00 GiB): 2.00 GiB"),
            std::string::npos);
}

TEST(PlanReportTest, StagesTableHasARowPerStage) {
  const std::string page = RenderPlanReport(TwoStagePlan(), "");
  EXPECT_NE(page.find("<td>0..5</td><td>0..3</td><td><code>(1,4) as [2,2] dp</code></td>"
                      "<td class=\"num\">10.0 ms</td><td class=\"num\">20.0 ms</td>"
                      "<td class=\"num\">5.00 ms</td>"),
            std::string::npos);
  EXPECT_NE(page.find("<td>all-reduce 12, all-gather 4</td>"), std::string::npos);
  EXPECT_NE(page.find("<td>4..7</td>"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"nowrap warn\">17.0 GiB of 16.0 GiB"), std::string::npos);
}

TEST(PlanReportTest, EscapesEveryTextFromTheDocument) {
  const std::string page = RenderPlanReport(TwoStagePlan(), "");
  EXPECT_EQ(page.find("gpt<&>\"tiny"), std::string::npos);
  EXPECT_NE(page.find("<h1>Plan of gpt&lt;&amp;&gt;&quot;tiny</h1>"), std::string::npos);
  EXPECT_NE(page.find("<title>Alpa plan: gpt&lt;&amp;&gt;&quot;tiny on p3.16xlarge:2x4</title>"),
            std::string::npos);
  EXPECT_NE(page.find("<code>block0.w&lt;q&gt;</code>"), std::string::npos);
  EXPECT_NE(page.find("<code>{devices=[1,4]&lt;=[4]}</code>"), std::string::npos);
}

TEST(PlanReportTest, ParameterShardingsPerStage) {
  const std::string page = RenderPlanReport(TwoStagePlan(), "");
  EXPECT_NE(page.find("<section id=\"parameters\">"), std::string::npos);
  EXPECT_EQ(Count(page, "<details>"), 2u);
  EXPECT_NE(page.find("<td><code>block6.wq</code></td><td><code>{replicated}</code></td>"),
            std::string::npos);
}

TEST(PlanReportTest, AlternativesWithTheirRatioToThisPlan) {
  const std::string page = RenderPlanReport(TwoStagePlan(), "");
  ASSERT_NE(page.find("<section id=\"alternatives\">"), std::string::npos);
  EXPECT_EQ(Count(page, "<g class=\"alt-bar\">"), 3u);
  EXPECT_NE(page.find(">this plan</text>"), std::string::npos);
  EXPECT_NE(page.find(">data parallel</text>"), std::string::npos);
  EXPECT_NE(page.find(">20.0 s, 2.00x this plan</text>"), std::string::npos);
  EXPECT_NE(page.find(">best uniform grid point</text>"), std::string::npos);
  EXPECT_NE(page.find(">15.0 s, 1.50x this plan</text>"), std::string::npos);
  EXPECT_NE(page.find("<li><strong>zero-3</strong> (dp 8, op 1, pp 1): does not fit: needs 40.0 "
                      "GiB per device</li>"),
            std::string::npos);
}

TEST(PlanReportTest, AnAlternativeWithoutGridPointHasNoDegrees) {
  Json plan = TwoStagePlan();
  plan["alternatives"] = Json::parse(R"([{"name": "best uniform grid point", "dp": 0, "op": 0,
      "pp": 0, "step_time_s": null, "error": "no point of the uniform grid fits"}])");
  EXPECT_NE(RenderPlanReport(plan, "").find("<li><strong>best uniform grid point</strong>: does "
                                            "not fit: no point of the uniform grid fits</li>"),
            std::string::npos);
}

TEST(PlanReportTest, OptionalSectionsAreLeftOutWhenAbsent) {
  Json plan = TwoStagePlan();
  plan.erase("alternatives");
  for (Json& stage : plan["stages"]) stage.erase("parameters");
  const std::string page = RenderPlanReport(plan, "");
  EXPECT_EQ(page.find("id=\"alternatives\""), std::string::npos);
  EXPECT_EQ(page.find("id=\"parameters\""), std::string::npos);
  EXPECT_NE(page.find("<section id=\"stages\">"), std::string::npos);
  EXPECT_TRUE(page.ends_with("</html>\n"));
}

TEST(PlanReportTest, AnEmptyDocumentStillRenders) {
  for (const Json& plan : {Json::object(), Json(nullptr), Json::parse(R"({"stages": [{}]})")}) {
    const std::string page = RenderPlanReport(plan, "");
    EXPECT_TRUE(page.starts_with("<!DOCTYPE html>")) << plan.dump();
    EXPECT_TRUE(page.ends_with("</html>\n")) << plan.dump();
  }
}

struct Rgba {
  int width = 0;
  int height = 0;
  std::vector<unsigned char> pixels;  // 4 bytes a pixel, row-major
};

Rgba ReadPng(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    ADD_FAILURE() << path << ": " << image.message;
    return {};
  }
  image.format = PNG_FORMAT_RGBA;
  Rgba rgba{static_cast<int>(image.width), static_cast<int>(image.height),
            std::vector<unsigned char>(PNG_IMAGE_SIZE(image))};
  if (!png_image_finish_read(&image, nullptr, rgba.pixels.data(), 0, nullptr)) {
    ADD_FAILURE() << path << ": " << image.message;
    return {};
  }
  return rgba;
}

// Pixels within 2 per channel of `color` ("#rrggbb"): anti-aliased edges do not count.
int CountColor(const Rgba& image, std::string_view color) {
  const int target = std::stoi(std::string(color.substr(1)), nullptr, 16);
  const int rgb[3] = {(target >> 16) & 0xff, (target >> 8) & 0xff, target & 0xff};
  int count = 0;
  for (size_t i = 0; i + 3 < image.pixels.size(); i += 4) {
    bool close = true;
    for (size_t c = 0; c < 3; ++c) close &= std::abs(image.pixels[i + c] - rgb[c]) <= 2;
    count += close ? 1 : 0;
  }
  return count;
}

// Renders the page in headless Chromium: the cluster picture must show both stages' colours.
TEST(PlanReportScreenshotTest, ChromiumDrawsBothStagesColours) {
  const std::filesystem::path chromium = "/usr/bin/chromium";
  if (!std::filesystem::exists(chromium)) {
    GTEST_SKIP() << chromium << " is missing; scripts/setup.sh installs it";
  }
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "alpa_plan_report_screenshot";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path page = dir / "plan.html", png = dir / "plan.png",
                              log = dir / "chromium.log";
  ASSERT_TRUE(WriteStringToFile(page.string(), RenderPlanReport(TwoStagePlan(), Timeline())).ok());
  // Its own profile folder, so that a Chromium running elsewhere does not take the call over.
  const std::string command = fmt::format(
      "timeout 60 '{}' --headless --no-sandbox --disable-gpu --hide-scrollbars "
      "--force-device-scale-factor=1 --user-data-dir='{}' --window-size=1200,1800 "
      "--screenshot='{}' 'file://{}' >'{}' 2>&1",
      chromium.string(), (dir / "profile").string(), png.string(), page.string(), log.string());
  const int status = std::system(command.c_str());
  const Result<std::string> output = ReadFileToString(log.string());
  ASSERT_EQ(status, 0) << command << "\n" << (output.ok() ? *output : "");
  const Rgba image = ReadPng(png);
  EXPECT_EQ(image.width, 1200);
  EXPECT_EQ(image.height, 1800);
  // Four 44-pixel squares a stage less their labels: far more than the 12-pixel swatches add.
  constexpr int kMinPixels = 4000;
  EXPECT_GE(CountColor(image, StageColor(0)), kMinPixels);
  EXPECT_GE(CountColor(image, StageColor(1)), kMinPixels);
}

}  // namespace
}  // namespace alpa::plan
