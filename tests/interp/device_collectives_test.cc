// The interpreter as one device of an SPMD program: partition-id from the DeviceContext, the group
// each collective resolves to, the blocks it hands the backend and how it lays out what comes
// back, and the errors. The backend here records the calls and answers with 0, 1, 2, ...; the
// runtime's tests (tests/runtime/spmd_executor_test.cc) run real devices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "interp/device_context.h"
#include "test_util.h"

namespace alpa::interp::testing {
namespace {

using ir::DType;

struct Call {
  std::string kind;
  std::vector<int64_t> group;
  std::string reduction;
  std::vector<double> input;
  std::vector<SourceTargetPair> pairs;
};

// Records every call; fills every output with 0, 1, 2, ... (its row-major position).
class RecordingBackend : public CollectiveBackend {
 public:
  std::vector<Call> calls;

  Status AllReduce(CollectiveGroup group, CollectiveReduction reduction, const ir::Literal& input,
                   ir::Literal& output) override {
    return Record("all-reduce", group, std::string(CollectiveReductionName(reduction)), input,
                  output);
  }
  Status AllGather(CollectiveGroup group, const ir::Literal& input, ir::Literal& output) override {
    return Record("all-gather", group, "", input, output);
  }
  Status ReduceScatter(CollectiveGroup group, CollectiveReduction reduction,
                       const ir::Literal& input, ir::Literal& output) override {
    return Record("reduce-scatter", group, std::string(CollectiveReductionName(reduction)), input,
                  output);
  }
  Status AllToAll(CollectiveGroup group, const ir::Literal& input, ir::Literal& output) override {
    return Record("all-to-all", group, "", input, output);
  }
  Status CollectivePermute(CollectiveGroup group, std::span<const SourceTargetPair> pairs,
                           const ir::Literal& input, ir::Literal& output) override {
    Status status = Record("collective-permute", group, "", input, output);
    calls.back().pairs.assign(pairs.begin(), pairs.end());
    return status;
  }
  Status Broadcast(CollectiveGroup group, int64_t root, const ir::Literal& input,
                   ir::Literal& output) override {
    return Record("broadcast from " + std::to_string(root), group, "", input, output);
  }

 private:
  Status Record(std::string kind, CollectiveGroup group, std::string reduction,
                const ir::Literal& input, ir::Literal& output) {
    calls.push_back({std::move(kind),
                     std::vector<int64_t>(group.begin(), group.end()),
                     std::move(reduction),
                     AsDoubles(input),
                     {}});
    for (int64_t i = 0; i < output.element_count(); ++i) output.SetDouble(i, i);
    return Status::Ok();
  }
};

// Runs `entry` (after the reducers) as device `device` of `devices`.
Result<ir::Literal> RunAs(int64_t device, int64_t devices, CollectiveBackend* backend,
                          std::string_view entry, std::vector<ir::Literal> args) {
  Result<std::unique_ptr<ir::Module>> module = ParseAfterCollectiveReducers(entry);
  if (!module.ok()) return module.status();
  DeviceContext context;
  context.partition_id = device;
  context.num_partitions = devices;
  context.collectives = backend;
  return EvaluateModule(**module, std::move(args), context);
}

ir::Literal F32(std::vector<int64_t> dims, std::vector<double> values) {
  return Vals(DType::kF32, std::move(dims), std::move(values));
}

void ExpectErrorMentions(const Result<ir::Literal>& result, std::vector<std::string> parts) {
  ASSERT_FALSE(result.ok());
  for (const std::string& part : parts) {
    EXPECT_THAT(result.status().message(), ::testing::HasSubstr(part));
  }
}

TEST(DeviceContextTest, PartitionIdIsTheDevice) {
  RecordingBackend backend;
  Result<ir::Literal> r = RunAs(3, 4, &backend, R"(ENTRY e {
  pid = u32[] partition-id()
  rid = u32[] replica-id()
  ROOT t = (u32[], u32[]) tuple(pid, rid)
})",
                                {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(AsInts(r->tuple_element(0)), (std::vector<int64_t>{3}));
  EXPECT_EQ(AsInts(r->tuple_element(1)), (std::vector<int64_t>{0}));
  EXPECT_TRUE(backend.calls.empty());
}

TEST(DeviceContextTest, PartitionIdOffsetsADynamicSliceToTheDeviceShard) {
  // Rows [2*pid, 2*pid + 2) of a replicated [4,2] value: device 1 takes rows 2 and 3.
  Result<ir::Literal> r = RunAs(1, 2, nullptr, R"(ENTRY e {
  x = f32[4,2] parameter(0)
  pid = u32[] partition-id()
  two = u32[] constant(2)
  row = u32[] multiply(pid, two)
  zero = u32[] constant(0)
  ROOT shard = f32[2,2] dynamic-slice(x, row, zero), dynamic_slice_sizes={2,2}
})",
                                {F32({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(AsDoubles(*r), (std::vector<double>{4, 5, 6, 7}));
}

TEST(DeviceContextTest, EachCollectiveJoinsTheGroupThatHoldsTheDevice) {
  RecordingBackend backend;
  // On device 3 of 4: rows {2,3} of a 2x2 mesh, columns {1,3} (iota [2,2]<=[2,2]T(1,0) is
  // {{0,2},{1,3}}), and all four when there are no groups.
  Result<ir::Literal> r = RunAs(3, 4, &backend, R"(ENTRY e {
  x = f32[2] parameter(0)
  row = f32[2] all-reduce(x), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=add
  column = f32[2] all-reduce(x), channel_id=2, replica_groups=[2,2]<=[2,2]T(1,0), use_global_device_ids=true, to_apply=max
  all = f32[2] all-reduce(x), replica_groups={}, to_apply=min
  ROOT t = (f32[2], f32[2], f32[2]) tuple(row, column, all)
})",
                                {F32({2}, {5, 6})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(backend.calls.size(), 3u);
  EXPECT_EQ(backend.calls[0].group, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(backend.calls[0].reduction, "sum");
  EXPECT_EQ(backend.calls[1].group, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(backend.calls[1].reduction, "max");  // maximum(b, a): either order
  EXPECT_EQ(backend.calls[2].group, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(backend.calls[2].reduction, "min");
  EXPECT_EQ(backend.calls[0].input, (std::vector<double>{5, 6}));
}

TEST(DeviceContextTest, AllGatherConcatenatesTheBlocksAlongItsDimension) {
  RecordingBackend backend;
  // The backend's blocks are [[0,1],[2,3]] (member 0) and [[4,5],[6,7]] (member 1); gathered
  // along dimension 1 they sit side by side.
  Result<ir::Literal> r = RunAs(0, 2, &backend, R"(ENTRY e {
  x = f32[2,2] parameter(0)
  ROOT g = f32[2,4] all-gather(x), dimensions={1}, replica_groups={{0,1}}
})",
                                {F32({2, 2}, {9, 9, 9, 9})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(AsDoubles(*r), (std::vector<double>{0, 1, 4, 5, 2, 3, 6, 7}));
}

TEST(DeviceContextTest, ReduceScatterHandsTheBackendTheBlocksOfItsDimension) {
  RecordingBackend backend;
  // x = [[0,1,2,3],[4,5,6,7]] split along dimension 1: block 0 = [[0,1],[4,5]], block 1 =
  // [[2,3],[6,7]], contiguous in that order.
  Result<ir::Literal> r = RunAs(1, 2, &backend, R"(ENTRY e {
  x = f32[2,4] parameter(0)
  ROOT s = f32[2,2] reduce-scatter(x), dimensions={1}, replica_groups={{0,1}}, to_apply=add
})",
                                {F32({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(backend.calls.size(), 1u);
  EXPECT_EQ(backend.calls[0].input, (std::vector<double>{0, 1, 4, 5, 2, 3, 6, 7}));
  EXPECT_EQ(r->shape().dims(), (std::vector<int64_t>{2, 2}));
}

TEST(DeviceContextTest, AllToAllSplitsAndConcatenatesAlongItsDimension) {
  RecordingBackend backend;
  Result<ir::Literal> r = RunAs(0, 2, &backend, R"(ENTRY e {
  x = f32[2,4] parameter(0)
  ROOT a = f32[2,4] all-to-all(x), dimensions={1}, replica_groups={{0,1}}
})",
                                {F32({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(backend.calls[0].input, (std::vector<double>{0, 1, 4, 5, 2, 3, 6, 7}));
  // Received blocks [[0,1],[2,3]] (from member 0) and [[4,5],[6,7]] (member 1), along dim 1.
  EXPECT_EQ(AsDoubles(*r), (std::vector<double>{0, 1, 4, 5, 2, 3, 6, 7}));
}

TEST(DeviceContextTest, CollectivePermuteJoinsAllDevicesWithItsPairs) {
  RecordingBackend backend;
  Result<ir::Literal> r = RunAs(2, 3, &backend, R"(ENTRY e {
  x = f32[2] parameter(0)
  ROOT p = f32[2] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,2}}
})",
                                {F32({2}, {1, 2})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(backend.calls.size(), 1u);
  EXPECT_EQ(backend.calls[0].group, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(backend.calls[0].pairs, (std::vector<SourceTargetPair>{{0, 1}, {1, 2}}));
}

TEST(DeviceContextTest, BadProgramsAreErrorsNamingTheInstruction) {
  const std::vector<ir::Literal> x{F32({4}, {1, 2, 3, 4})};
  auto run = [&](int64_t device, int64_t devices, CollectiveBackend* backend,
                 const std::string& root) {
    return RunAs(device, devices, backend,
                 "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT " + root + "\n}\n", x);
  };
  RecordingBackend backend;
  ExpectErrorMentions(run(0, 2, &backend, "prod = f32[4] all-reduce(x), to_apply=mul"),
                      {"%prod", "mul", "sum, max or min"});
  ExpectErrorMentions(
      run(2, 4, &backend, "pair = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=add"),
      {"%pair", "device 2 of 4 is in none"});
  ExpectErrorMentions(
      run(0, 2, &backend, "wide = f32[4] all-reduce(x), replica_groups={{0,1,2,3}}, to_apply=add"),
      {"%wide", "names device 2", "runs on 2 devices"});
  ExpectErrorMentions(
      run(0, 2, &backend, "far = f32[4] collective-permute(x), source_target_pairs={{0,3}}"),
      {"%far", "device 3"});
  // Groups of 4 declare a 4x result, but the device is given a group of 2.
  ExpectErrorMentions(
      run(0, 2, &backend, "g = f32[16] all-gather(x), dimensions={0}, replica_groups={}"),
      {"%g", "f32[16]", "f32[8]"});
  EXPECT_TRUE(backend.calls.size() == 1u && backend.calls[0].kind == "all-gather")
      << "only the all-gather reached the backend";
  ExpectErrorMentions(
      run(0, 2, nullptr, "sum = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=add"),
      {"%sum", "no collective backend"});
}

TEST(DeviceContextTest, ADeviceThatDoesNotExistIsAnError) {
  Result<ir::Literal> r =
      RunAs(2, 2, nullptr, "ENTRY e {\n  ROOT p = u32[] partition-id()\n}\n", {});
  ExpectErrorMentions(r, {"device 2 of 2"});
}

}  // namespace
}  // namespace alpa::interp::testing
