// `alpa run --method pipeshard` (tools/alpa/pipeshard_run.h): a pipelined plan planned, or given
// as manual stages or a saved plan, trained on in-process devices or MPI ranks and checked against
// the reference interpreter, with the measured figures beside the simulator's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;

class CliRunPipeshardTest : public AlpaCliTest {};

TEST_F(CliRunPipeshardTest, APipelinedPlanTrainsAsTheReferenceDoes) {
  const RunResult r = RunAlpa({"run", "gpt-tiny", "--layers", "4", "--cluster", "local:4",
                               "--method", "pipeshard", "--manual-stages",
                               Write("stages.json", R"({"layers": 6, "schedule": "1f1b", "stages": [
                 {"layers": [0, 1, 2], "submesh": [1, 2], "logical_mesh": [1, 2],
                  "force_batch_dim_to_mesh_dim": 0},
                 {"layers": [3, 4, 5], "submesh": [1, 2], "logical_mesh": [2, 1],
                  "force_batch_dim_to_mesh_dim": 0}]})"),
                               "--micro-batches", "2", "--steps", "3", "--check", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json json = ParseJson(r);
  EXPECT_EQ(json["steps"].size(), 3u);
  EXPECT_EQ(json["check"]["passed"], true) << json["check"].dump();
  const nlohmann::json& summary = json["summary"];
  EXPECT_EQ(summary["schedule"], "1f1b");
  EXPECT_EQ(summary["num_micro_batches"], 2);
  ASSERT_EQ(summary["stages"].size(), 2u);
  EXPECT_EQ(summary["stages"][0]["devices"], nlohmann::json({0, 1}));
  EXPECT_EQ(summary["stages"][1]["devices"], nlohmann::json({2, 3}));
  EXPECT_GT(summary["cross_mesh_bytes_per_step"].get<int64_t>(), 0);
  // What crossed between the sub-meshes is what the plan priced: the activations and their
  // gradients once per micro-batch, the tied embedding's gradient sums once; and so is what the
  // receivers' replicas all-gathered inside their meshes.
  EXPECT_EQ(summary["between_meshes_bytes_per_step"], summary["priced_transfer_bytes_per_step"]);
  EXPECT_EQ(summary["within_receivers_bytes_per_step"], summary["priced_gather_bytes_per_step"]);
  for (const nlohmann::json& stage : summary["stages"]) {
    EXPECT_GT(stage["measured_peak_memory_bytes"].get<int64_t>(), 0);
  }
}

TEST_F(CliRunPipeshardTest, ASavedPipelinedPlanRunsWithTheSameStages) {
  const std::string plan = dir_.string() + "/plan.json";
  const RunResult planned =
      RunAlpa({"plan", "mlp-tiny", "--layers", "4", "--cluster", "local:4", "--method", "pipeshard",
               "--micro-batches", "2", "--schedule", "gpipe", "-o", plan});
  ASSERT_EQ(planned.exit_code, 0) << Describe(planned);
  const nlohmann::json saved = nlohmann::json::parse(ReadFile(plan));
  const RunResult r =
      RunAlpa({"run", "mlp-tiny", "--layers", "4", "--cluster", "local:4", "--micro-batches", "2",
               "--plan", plan, "--steps", "2", "--check", "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json json = ParseJson(r);
  EXPECT_EQ(json["check"]["passed"], true);
  EXPECT_EQ(json["summary"]["stages"].size(), saved["stages"].size());
  EXPECT_EQ(json["summary"]["schedule"], saved["schedule"]);
  EXPECT_DOUBLE_EQ(json["summary"]["predicted_step_time_s"].get<double>(),
                   saved["estimate"]["step_time_s"].get<double>());
}

TEST_F(CliRunPipeshardTest, ThePlanAndTheStepsArePrinted) {
  const std::string trace = dir_.string() + "/trace.json";
  const RunResult r =
      RunAlpa({"run", "mlp-tiny", "--layers", "4", "--cluster", "local:2", "--method", "pipeshard",
               "--micro-batches", "2", "--steps", "2", "--trace", trace});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("plan        pipeshard:"));
  EXPECT_THAT(r.out, HasSubstr("bubble"));
  EXPECT_THAT(r.out, HasSubstr("measured"));
  const nlohmann::json events = nlohmann::json::parse(ReadFile(trace));
  EXPECT_GT(events["otherData"]["tasks"].get<int64_t>(), 0);
}

// Pipelined plans on MPI ranks, one device per rank, train as the in-process devices do: each
// rank runs its device's list as that device's thread did, so the losses agree step by step (up
// to the order MPI sums an all-reduce in), the bytes between stages and every stage's measured
// peak are the same, and --check passes on rank 0.
TEST_F(CliRunPipeshardTest, MpiRanksTrainAsTheInProcessDevicesDo) {
  const std::string two_stages = Write("two_stages.json", R"({"layers": 6, "stages": [
      {"layers": [0, 1, 2], "submesh": [1, 2], "logical_mesh": [1, 2],
       "force_batch_dim_to_mesh_dim": 0},
      {"layers": [3, 4, 5], "submesh": [1, 2], "logical_mesh": [2, 1],
       "force_batch_dim_to_mesh_dim": 0}]})");
  const std::vector<std::vector<std::string>> cells = {
      // 2 stages of 2 devices with different logical meshes, 1F1B, fewer micro-batches than
      // devices.
      {"gpt-tiny", "--micro-batches", "2", "--schedule", "1f1b", "--manual-stages", two_stages},
      // The planner's choice: interleaved 1F1B over 2 groups of 2 devices.
      {"gpt-tiny", "--micro-batches", "4"},
      // The planner's choice: 4 stages of 1 device, 1F1B.
      {"mlp-tiny", "--micro-batches", "4"},
      // GPipe with 1 micro-batch.
      {"mlp-tiny", "--micro-batches", "1", "--schedule", "gpipe"},
  };
  for (const std::vector<std::string>& cell : cells) {
    SCOPED_TRACE(::testing::PrintToString(cell));
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), cell.begin(), cell.end());
    args.insert(args.end(), {"--layers", "4", "--cluster", "local:4", "--method", "pipeshard",
                             "--steps", "3", "--json"});
    const RunResult in_process = RunAlpa(args);
    ASSERT_EQ(in_process.exit_code, 0) << Describe(in_process);
    const std::string trace = dir_.string() + "/mpi_trace.json";
    args.insert(args.end(), {"--backend", "mpi", "--check", "--trace", trace});
    const RunResult mpi = RunAlpaUnderMpi(4, args);
    ASSERT_EQ(mpi.exit_code, 0) << Describe(mpi);
    // Every rank's tasks reach rank 0's trace.
    const nlohmann::json events = nlohmann::json::parse(ReadFile(trace));
    std::set<int64_t> traced;
    for (const nlohmann::json& event : events["traceEvents"]) {
      const int64_t device = event.value("tid", int64_t{-1});
      if (event.value("ph", "") == "X" && device >= 0) traced.insert(device);
    }
    EXPECT_EQ(traced, (std::set<int64_t>{0, 1, 2, 3}));
    const nlohmann::json want = ParseJson(in_process), got = ParseJson(mpi);  // rank 0 prints
    EXPECT_EQ(got["check"]["passed"], true) << got["check"].dump(2);
    ASSERT_EQ(got["steps"].size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      const double loss = want["steps"][i]["loss"];
      EXPECT_NEAR(got["steps"][i]["loss"].get<double>(), loss, 1e-6 * std::abs(loss));
    }
    const nlohmann::json &want_summary = want["summary"], &got_summary = got["summary"];
    EXPECT_EQ(got_summary["schedule"], want_summary["schedule"]);
    EXPECT_EQ(got_summary["cross_mesh_bytes_per_step"], want_summary["cross_mesh_bytes_per_step"]);
    ASSERT_EQ(got_summary["stages"].size(), want_summary["stages"].size());
    for (size_t s = 0; s < got_summary["stages"].size(); ++s) {
      EXPECT_EQ(got_summary["stages"][s]["measured_peak_memory_bytes"],
                want_summary["stages"][s]["measured_peak_memory_bytes"]);
    }
  }
}

TEST_F(CliRunPipeshardTest, BadInputIsNamed) {
  ExpectBadInput(RunAlpa({"run", "mlp-tiny", "--cluster", "local:4", "--method", "pipeshard",
                          "--mesh", "2x2"}),
                 "--mesh and --batch-axis are single-stage flags");
  ExpectBadInput(RunAlpa({"run", "mlp-tiny", "--cluster", "local:4", "--schedule", "gpipe"}),
                 "--schedule, --manual-stages and --profile need --method pipeshard");
  ExpectBadInput(RunAlpa({"run", "mlp-tiny", "--cluster", "local:4", "--method", "pipeshard",
                          "--backend", "mpi"}),
                 "start it with mpirun -np N");
  ExpectBadInput(RunAlpaUnderMpi(2, {"run", "mlp-tiny", "--cluster", "local:4", "--method",
                                     "pipeshard", "--backend", "mpi"}),
                 "the plan has 4 devices but mpirun started 2 processes; run mpirun -np 4");
  // Interleaved stages need micro-batches in multiples of the device groups.
  ExpectBadInput(
      RunAlpa({"run", "mlp-tiny", "--layers", "4", "--batch", "24", "--cluster", "local:4",
               "--method", "pipeshard", "--micro-batches", "3", "--manual-stages",
               Write("interleaved.json",
                     R"({"layers": 5, "schedule": "interleaved-1f1b", "num_chunks": 2,
                         "stages": [{"layers": [0, 1], "submesh": [1, 2], "logical_mesh": [2, 1]},
                                    {"layers": [2], "submesh": [1, 2], "logical_mesh": [2, 1]},
                                    {"layers": [3], "submesh": [1, 2], "logical_mesh": [2, 1]},
                                    {"layers": [4], "submesh": [1, 2], "logical_mesh": [2, 1]}]})")}),
      "interleaved 1F1B needs a multiple of the 2 devices (the nearest: 2 or 4)");
  // Stages that leave a layer out.
  ExpectBadInput(
      RunAlpa({"run", "mlp-tiny", "--layers", "4", "--cluster", "local:4", "--method", "pipeshard",
               "--manual-stages", Write("gap.json", R"({"layers": 5, "stages": [
                 {"layers": [0, 1], "submesh": [1, 2], "logical_mesh": [2, 1]},
                 {"layers": [3, 4], "submesh": [1, 2], "logical_mesh": [2, 1]}]})")}),
      "gap.json");
}

}  // namespace
}  // namespace alpa::tools::testing
