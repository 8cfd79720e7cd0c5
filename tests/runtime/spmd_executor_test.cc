// SPMD programs on N in-process devices (RunSpmdProgram): every collective against values
// computed by hand, over all devices and over the rows and columns of a 2x2 mesh, and the
// errors of bad programs.
#include "runtime/spmd_executor.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/interp/test_util.h"

namespace alpa::runtime {
namespace {

using interp::testing::ParseAfterCollectiveReducers;
using ir::DType;
using ir::Literal;

Literal F32(std::vector<int64_t> dims, std::vector<double> values) {
  return Literal::FromDoubles(ir::Shape::Array(DType::kF32, std::move(dims)), values);
}
std::vector<double> Values(const Literal& literal) {
  std::vector<double> values;
  for (int64_t i = 0; i < literal.element_count(); ++i) values.push_back(literal.GetDouble(i));
  return values;
}

// `entry` after the reducers, on arguments_per_device.size() devices.
Result<std::vector<std::vector<Literal>>> RunText(std::string_view entry,
                                                  std::vector<std::vector<Literal>> arguments,
                                                  InProcessOptions options = {}) {
  Result<std::unique_ptr<ir::Module>> module = ParseAfterCollectiveReducers(entry);
  if (!module.ok()) return module.status();
  return RunSpmdProgram(**module, std::move(arguments), options);
}

// Runs and fails the test on error; outputs[device][output].
std::vector<std::vector<Literal>> MustRun(std::string_view entry,
                                          std::vector<std::vector<Literal>> arguments) {
  Result<std::vector<std::vector<Literal>>> outputs = RunText(entry, std::move(arguments));
  EXPECT_TRUE(outputs.ok()) << outputs.status().ToString();
  return outputs.ok() ? std::move(outputs).value() : std::vector<std::vector<Literal>>{};
}

// Device d's [rows, cols] argument: 100 * d + (row-major position).
std::vector<std::vector<Literal>> Numbered(int64_t devices, int64_t rows, int64_t cols) {
  std::vector<std::vector<Literal>> arguments;
  for (int64_t d = 0; d < devices; ++d) {
    std::vector<double> values;
    for (int64_t i = 0; i < rows * cols; ++i) values.push_back(static_cast<double>(100 * d + i));
    arguments.push_back({F32({rows, cols}, values)});
  }
  return arguments;
}

TEST(SpmdExecutorTest, AllReduceSumAndMaxOverAllDevices) {
  std::vector<std::vector<Literal>> arguments;
  for (int64_t d = 0; d < 4; ++d) arguments.push_back({F32({2}, {double(d), 10.0 - d})});
  const auto outputs = MustRun(R"(ENTRY e {
  x = f32[2] parameter(0)
  sum = f32[2] all-reduce(x), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=add
  max = f32[2] all-reduce(x), replica_groups={}, to_apply=max
  start = f32[2] all-reduce-start(x), replica_groups=[1,4]<=[4], to_apply=add
  done = f32[2] all-reduce-done(start)
  ROOT t = (f32[2], f32[2], f32[2]) tuple(sum, max, done)
})",
                               std::move(arguments));
  ASSERT_EQ(outputs.size(), 4u);
  for (const std::vector<Literal>& device : outputs) {
    ASSERT_EQ(device.size(), 3u);
    EXPECT_EQ(Values(device[0]), (std::vector<double>{0 + 1 + 2 + 3, 10 + 9 + 8 + 7}));
    EXPECT_EQ(Values(device[1]), (std::vector<double>{3, 10}));
    EXPECT_EQ(Values(device[2]), Values(device[0]));
  }
}

TEST(SpmdExecutorTest, AllReduceOverTheRowsAndColumnsOfA2x2Mesh) {
  // Device d = 2 * row + column holds 2^d.
  std::vector<std::vector<Literal>> arguments;
  for (int64_t d = 0; d < 4; ++d) arguments.push_back({F32({1}, {double(1 << d)})});
  const auto outputs = MustRun(R"(ENTRY e {
  x = f32[1] parameter(0)
  row = f32[1] all-reduce(x), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=add
  column = f32[1] all-reduce(x), channel_id=2, replica_groups=[2,2]<=[2,2]T(1,0), use_global_device_ids=true, to_apply=add
  ROOT t = (f32[1], f32[1]) tuple(row, column)
})",
                               std::move(arguments));
  ASSERT_EQ(outputs.size(), 4u);
  const std::vector<double> rows{1 + 2, 1 + 2, 4 + 8, 4 + 8};
  const std::vector<double> columns{1 + 4, 2 + 8, 1 + 4, 2 + 8};
  for (size_t d = 0; d < 4; ++d) {
    EXPECT_EQ(Values(outputs[d][0]), (std::vector<double>{rows[d]})) << "device " << d;
    EXPECT_EQ(Values(outputs[d][1]), (std::vector<double>{columns[d]})) << "device " << d;
  }
}

TEST(SpmdExecutorTest, AllGatherConcatenatesAlongItsDimension) {
  for (int64_t n : {2, 4}) {
    SCOPED_TRACE(n);
    // [2,1] per device gathered along dimension 1: row r of the result is 100 * d + r over d;
    // along dimension 0 the devices' columns are stacked.
    const std::string entry = fmt::format(R"(ENTRY e {{
  x = f32[2,1] parameter(0)
  columns = f32[2,{0}] all-gather(x), dimensions={{1}}, replica_groups={{}}
  rows = f32[{1},1] all-gather(x), dimensions={{0}}, replica_groups={{}}
  ROOT t = (f32[2,{0}], f32[{1},1]) tuple(columns, rows)
}})",
                                          n, 2 * n);
    const auto outputs = MustRun(entry, Numbered(n, 2, 1));
    std::vector<double> columns, rows;
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t d = 0; d < n; ++d) columns.push_back(static_cast<double>(100 * d + r));
    }
    for (int64_t d = 0; d < n; ++d) {
      for (int64_t r = 0; r < 2; ++r) rows.push_back(static_cast<double>(100 * d + r));
    }
    ASSERT_EQ(outputs.size(), static_cast<size_t>(n));
    for (const std::vector<Literal>& device : outputs) {
      EXPECT_EQ(Values(device[0]), columns);
      EXPECT_EQ(Values(device[1]), rows);
    }
  }
}

TEST(SpmdExecutorTest, ReduceScatterHandsOutBlocksOfItsDimension) {
  for (int64_t n : {2, 4}) {
    SCOPED_TRACE(n);
    // The sum over devices of x_d[r][c] = 100 d + 4 r + c is S[r][c] = 100 * n(n-1)/2 +
    // n (4 r + c); device j keeps columns [j * 4/n, (j+1) * 4/n) of it.
    const std::string entry = fmt::format(R"(ENTRY e {{
  x = f32[2,4] parameter(0)
  ROOT s = f32[2,{0}] reduce-scatter(x), dimensions={{1}}, replica_groups={{}}, to_apply=add
}})",
                                          4 / n);
    const auto outputs = MustRun(entry, Numbered(n, 2, 4));
    ASSERT_EQ(outputs.size(), static_cast<size_t>(n));
    const int64_t width = 4 / n;
    for (int64_t j = 0; j < n; ++j) {
      std::vector<double> expected;
      for (int64_t r = 0; r < 2; ++r) {
        for (int64_t c = j * width; c < (j + 1) * width; ++c) {
          expected.push_back(static_cast<double>(100 * n * (n - 1) / 2 + n * (4 * r + c)));
        }
      }
      EXPECT_EQ(Values(outputs[static_cast<size_t>(j)][0]), expected) << "device " << j;
    }
  }
}

TEST(SpmdExecutorTest, AllToAllExchangesBlocksOfItsDimension) {
  for (int64_t n : {2, 4}) {
    SCOPED_TRACE(n);
    // Device j receives block j (along dimension 1) of every device i, placed at block i:
    // out_j[r][i * w + k] = x_i[r][j * w + k], w = 4 / n.
    const auto outputs = MustRun(R"(ENTRY e {
  x = f32[2,4] parameter(0)
  ROOT a = f32[2,4] all-to-all(x), dimensions={1}, replica_groups={}
})",
                                 Numbered(n, 2, 4));
    ASSERT_EQ(outputs.size(), static_cast<size_t>(n));
    const int64_t w = 4 / n;
    for (int64_t j = 0; j < n; ++j) {
      std::vector<double> expected;
      for (int64_t r = 0; r < 2; ++r) {
        for (int64_t c = 0; c < 4; ++c) {
          const int64_t i = c / w, k = c % w;
          expected.push_back(static_cast<double>(100 * i + 4 * r + j * w + k));
        }
      }
      EXPECT_EQ(Values(outputs[static_cast<size_t>(j)][0]), expected) << "device " << j;
    }
  }
}

TEST(SpmdExecutorTest, CollectivePermuteShiftsAroundARing) {
  // ring: device d receives device d-1's value; one: only device 1 receives, the others get 0.
  const auto outputs = MustRun(R"(ENTRY e {
  x = f32[1,2] parameter(0)
  ring = f32[1,2] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  one = f32[1,2] collective-permute(x), channel_id=2, source_target_pairs={{2,1}}
  ROOT t = (f32[1,2], f32[1,2]) tuple(ring, one)
})",
                               Numbered(4, 1, 2));
  ASSERT_EQ(outputs.size(), 4u);
  for (int64_t d = 0; d < 4; ++d) {
    const double from = 100.0 * ((d + 3) % 4);
    EXPECT_EQ(Values(outputs[d][0]), (std::vector<double>{from, from + 1})) << "device " << d;
    const std::vector<double> one =
        d == 1 ? std::vector<double>{200, 201} : std::vector<double>{0, 0};
    EXPECT_EQ(Values(outputs[d][1]), one) << "device " << d;
  }
}

TEST(SpmdExecutorTest, PartitionIdAndDynamicSliceTakeTheDeviceShard) {
  // A replicated [8] value; device d takes elements [2d, 2d+2).
  std::vector<std::vector<Literal>> arguments(4, {F32({8}, {0, 1, 2, 3, 4, 5, 6, 7})});
  const auto outputs = MustRun(R"(ENTRY e {
  x = f32[8] parameter(0)
  pid = u32[] partition-id()
  two = u32[] constant(2)
  offset = u32[] multiply(pid, two)
  ROOT shard = f32[2] dynamic-slice(x, offset), dynamic_slice_sizes={2}
})",
                               std::move(arguments));
  ASSERT_EQ(outputs.size(), 4u);
  for (int64_t d = 0; d < 4; ++d) {
    EXPECT_EQ(Values(outputs[d][0]), (std::vector<double>{2.0 * d, 2.0 * d + 1}));
  }
}

TEST(SpmdExecutorTest, AsyncHalvesTupleFormsAndBroadcastRunOnDevices) {
  // Two devices, x_d = [100 d, 100 d + 1] and y_d = x_d + 10.
  std::vector<std::vector<Literal>> arguments;
  for (int64_t d = 0; d < 2; ++d) {
    const double base = 100.0 * d;
    arguments.push_back({F32({2}, {base, base + 1}), F32({2}, {base + 10, base + 11})});
  }
  const auto outputs = MustRun(R"(ENTRY e {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  gs = (f32[2], f32[4]) all-gather-start(x), dimensions={0}, replica_groups={{0,1}}
  gathered = f32[4] all-gather-done(gs)
  ps = (f32[2], f32[2], u32[], u32[]) collective-permute-start(x), source_target_pairs={{0,1},{1,0}}
  swapped = f32[2] collective-permute-done(ps)
  a2a = (f32[2], f32[2]) all-to-all(x, y), replica_groups={{0,1}}
  from0 = f32[2] get-tuple-element(a2a), index=0
  from1 = f32[2] get-tuple-element(a2a), index=1
  root = f32[2] collective-broadcast(y), replica_groups={{1,0}}
  ROOT t = (f32[4], f32[2], f32[2], f32[2], f32[2]) tuple(gathered, swapped, from0, from1, root)
})",
                               std::move(arguments));
  ASSERT_EQ(outputs.size(), 2u);
  for (int64_t d = 0; d < 2; ++d) {
    SCOPED_TRACE(d);
    const std::vector<Literal>& out = outputs[d];
    ASSERT_EQ(out.size(), 5u);
    EXPECT_EQ(Values(out[0]), (std::vector<double>{0, 1, 100, 101}));
    const double other = 100.0 * (1 - d);
    EXPECT_EQ(Values(out[1]), (std::vector<double>{other, other + 1}));
    // Tuple all-to-all: device d receives operand d of every device i, at element i
    // (operand 0 is x, operand 1 is y = x + 10).
    const double offset = 10.0 * d;
    EXPECT_EQ(Values(out[2]), (std::vector<double>{offset, offset + 1}));
    EXPECT_EQ(Values(out[3]), (std::vector<double>{100 + offset, 101 + offset}));
    // The first device of the group {1,0} is the source.
    EXPECT_EQ(Values(out[4]), (std::vector<double>{110, 111}));
  }
}

void ExpectErrorMentions(const Result<std::vector<std::vector<Literal>>>& result,
                         std::vector<std::string> parts) {
  ASSERT_FALSE(result.ok());
  for (const std::string& part : parts) {
    EXPECT_THAT(result.status().message(), ::testing::HasSubstr(part));
  }
}

TEST(SpmdExecutorTest, BadProgramsFailWithTheDeviceAndInstruction) {
  auto run = [](const std::string& root, int64_t devices) {
    return RunText("ENTRY e {\n  x = f32[1,4] parameter(0)\n  ROOT " + root + "\n}\n",
                   Numbered(devices, 1, 4));
  };
  // A reducer that is not sum, max or min.
  ExpectErrorMentions(run("p = f32[1,4] all-reduce(x), replica_groups={}, to_apply=mul", 2),
                      {"device 0:", "device 1:", "%p", "sum, max or min"});
  // Devices 2 and 3 are in no group (0 and 1 complete their all-reduce).
  ExpectErrorMentions(run("s = f32[1,4] all-reduce(x), replica_groups={{0,1}}, to_apply=add", 4),
                      {"device 2:", "device 3:", "is in none of the replica groups"});
  // Groups written for 4 devices, run on 2 (and on 3).
  for (int64_t devices : {2, 3}) {
    ExpectErrorMentions(
        run("s = f32[1,4] all-reduce(x), replica_groups={{0,1},{2,3}}, to_apply=add", devices),
        {"names device " + std::to_string(devices == 2 ? 2 : 3),
         "runs on " + std::to_string(devices) + " devices"});
  }
}

TEST(SpmdExecutorTest, ADeviceThatFailsEndsItsPeersWithoutAHang) {
  // Device 1 is given a wrong argument and fails before the all-reduce; device 0 waits for it
  // until the communicator's timeout, then fails too. The message names device 1's own error
  // first.
  std::vector<std::vector<Literal>> arguments{{F32({4}, {1, 2, 3, 4})}, {F32({3}, {1, 2, 3})}};
  InProcessOptions options;
  options.timeout_seconds = 0.5;
  Result<std::vector<std::vector<Literal>>> result = RunText(R"(ENTRY e {
  x = f32[4] parameter(0)
  ROOT s = f32[4] all-reduce(x), replica_groups={}, to_apply=add
})",
                                                             std::move(arguments), options);
  ExpectErrorMentions(result, {"device 1: argument 0", "device 0:", "timed out"});
  EXPECT_LT(result.status().message().find("device 1:"),
            result.status().message().find("device 0:"));
}

TEST(SpmdExecutorTest, NoDevicesIsAnError) {
  ExpectErrorMentions(RunText("ENTRY e {\n  ROOT p = u32[] partition-id()\n}\n", {}),
                      {"at least one device"});
}

}  // namespace
}  // namespace alpa::runtime
