#include "pipeline/trace_export.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/file.h"
#include "test_util.h"

namespace alpa::pipeline {
namespace {

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + needle.size())) {
    ++count;
  }
  return count;
}

SimulationResult TwoByFour(ScheduleKind kind) {
  Result<SimulationResult> result = SimulatePipeline(testing::UniformSpec(2, 4, kind));
  EXPECT_TRUE(result.ok());
  return *result;
}

TEST(TraceExportTest, ChromeTraceHasOneCompleteEventPerTask) {
  const SimulationResult result = TwoByFour(ScheduleKind::k1F1B);
  const nlohmann::json trace = nlohmann::json::parse(ToChromeTrace(result));
  int complete = 0;
  for (const nlohmann::json& event : trace.at("traceEvents")) {
    if (event.at("ph") != "X") continue;
    ++complete;
    const std::string name = event.at("name");
    const bool forward = name[0] == 'F';
    EXPECT_EQ(event.at("cat"), forward ? "forward" : "backward");
    // f = 1 s, b = 2 s, in microseconds.
    EXPECT_DOUBLE_EQ(event.at("dur").get<double>(), forward ? 1e6 : 2e6) << name;
    EXPECT_EQ(event.at("pid"), 0);
    EXPECT_EQ(name.substr(1), std::to_string(event.at("args").at("micro_batch").get<int>()));
  }
  EXPECT_EQ(complete, 2 * 2 * 4);
  EXPECT_DOUBLE_EQ(trace.at("otherData").at("step_time_s").get<double>(), 15);
  // 1F1B stage 1's B0 runs 2-4 s.
  bool found = false;
  for (const nlohmann::json& event : trace.at("traceEvents")) {
    if (event.at("ph") == "X" && event.at("tid") == 1 && event.at("name") == "B0") {
      EXPECT_DOUBLE_EQ(event.at("ts").get<double>(), 2e6);
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(TraceExportTest, SvgGanttHasARectPerTaskAndEscapesText) {
  const SimulationResult result = TwoByFour(ScheduleKind::kGPipe);
  const std::string svg = ToSvgGantt(result, "GPT <2 stages> & \"friends\"");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(Count(svg, "class=\"task fwd\""), 8u);
  EXPECT_EQ(Count(svg, "class=\"task bwd\""), 8u);
  EXPECT_EQ(Count(svg, "<rect class=\"task"), 2u * 2u * 4u);
  EXPECT_NE(svg.find("GPT &lt;2 stages&gt; &amp; &quot;friends&quot;"), std::string::npos);
  EXPECT_EQ(svg.find("<2 stages>"), std::string::npos);
  EXPECT_NE(svg.find("bubble 20.0%"), std::string::npos);
  EXPECT_NE(svg.find("stage 1"), std::string::npos);
  EXPECT_EQ(Count(svg, "<text"), Count(svg, "</text>"));
  EXPECT_EQ(Count(svg, "<rect"), Count(svg, "</rect>") + 1);  // the background is self-closed
}

TEST(TraceExportTest, WritesFiles) {
  const SimulationResult result = TwoByFour(ScheduleKind::k1F1B);
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string json_path = dir + "/alpa_pipeline_test_trace.json";
  const std::string svg_path = dir + "/alpa_pipeline_test_gantt.svg";
  ASSERT_TRUE(WriteChromeTrace(result, json_path).ok());
  ASSERT_TRUE(WriteSvgGantt(result, svg_path, "1F1B 2x4").ok());
  Result<std::string> json = ReadFileToString(json_path);
  Result<std::string> svg = ReadFileToString(svg_path);
  ASSERT_TRUE(json.ok());
  ASSERT_TRUE(svg.ok());
  EXPECT_EQ(*json, ToChromeTrace(result));
  EXPECT_EQ(*svg, ToSvgGantt(result, "1F1B 2x4"));
  Status bad = WriteChromeTrace(result, dir + "/no/such/dir/trace.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("no/such/dir"), std::string::npos);
}

}  // namespace
}  // namespace alpa::pipeline
