// The in-process communicator: every collective against a naive reference computed on one thread,
// over the groups a 2x4 mesh gives (all devices, rows, columns, and all devices in reverse order),
// odd sizes, half types; and the failures: bad arguments, disagreeing members, a peer that never
// arrives.
#include "runtime/in_process_communicator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <vector>

#include "ir/element_type.h"

namespace alpa::runtime {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using Groups = std::vector<std::vector<int64_t>>;

constexpr int64_t kDevices = 8;  // a 2x4 mesh, device = row * 4 + column

// The ways a 2x4 mesh splits into groups; every device is in exactly one group of each.
std::vector<Groups> MeshPartitions() {
  return {{{0, 1, 2, 3, 4, 5, 6, 7}},
          {{0, 1, 2, 3}, {4, 5, 6, 7}},
          {{0, 4}, {1, 5}, {2, 6}, {3, 7}},
          {{7, 6, 5, 4, 3, 2, 1, 0}}};
}

const std::vector<int64_t>& GroupOf(const Groups& groups, int64_t rank) {
  for (const std::vector<int64_t>& group : groups) {
    if (std::find(group.begin(), group.end(), rank) != group.end()) return group;
  }
  ADD_FAILURE() << "device " << rank << " in no group";
  return groups[0];
}

int64_t IndexOf(const std::vector<int64_t>& group, int64_t rank) {
  return std::find(group.begin(), group.end(), rank) - group.begin();
}

// Element k of device `rank`'s data: small integers, exact in every tested dtype, and so are
// their sums over 8 devices.
double Value(int64_t rank, int64_t k) { return static_cast<double>((rank * 7 + k * 3) % 11) - 5; }

std::vector<double> Values(int64_t rank, int64_t count) {
  std::vector<double> values(count);
  for (int64_t k = 0; k < count; ++k) values[k] = Value(rank, k);
  return values;
}

// A typed buffer holding `values` converted to `dtype`.
struct Typed {
  ir::DType dtype;
  std::vector<char> bytes;
  int64_t count;
  MutableBuffer view() { return {dtype, bytes.data(), count}; }
  ConstBuffer view() const { return {dtype, bytes.data(), count}; }
};

// Calls fn(TypeTag<T>{}) for the dtypes these tests use.
template <typename Fn>
void VisitTested(ir::DType dtype, Fn&& fn) {
  switch (dtype) {
    case ir::DType::kF32:
      return fn(ir::TypeTag<float>{});
    case ir::DType::kF64:
      return fn(ir::TypeTag<double>{});
    case ir::DType::kS32:
      return fn(ir::TypeTag<int32_t>{});
    case ir::DType::kF16:
      return fn(ir::TypeTag<Eigen::half>{});
    case ir::DType::kBF16:
      return fn(ir::TypeTag<Eigen::bfloat16>{});
    default:
      FAIL() << "untested dtype " << ir::DTypeName(dtype);
  }
}

Typed Encode(ir::DType dtype, const std::vector<double>& values) {
  Typed typed{dtype, std::vector<char>(values.size() * ir::DTypeByteSize(dtype)),
              static_cast<int64_t>(values.size())};
  VisitTested(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (size_t k = 0; k < values.size(); ++k) {
      reinterpret_cast<T*>(typed.bytes.data())[k] = static_cast<T>(values[k]);
    }
  });
  return typed;
}

std::vector<double> Decode(const Typed& typed) {
  std::vector<double> values(typed.count);
  VisitTested(typed.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t k = 0; k < typed.count; ++k) {
      values[k] = static_cast<double>(reinterpret_cast<const T*>(typed.bytes.data())[k]);
    }
  });
  return values;
}

// Ok, or an error saying where `got` first differs from `want`.
Status Compare(const std::string& what, const std::vector<double>& got,
               const std::vector<double>& want) {
  if (got.size() != want.size())
    return Internal("{}: {} values, want {}", what, got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    if (got[k] != want[k]) return Internal("{}: [{}] = {}, want {}", what, k, got[k], want[k]);
  }
  return Status::Ok();
}

double Reduce(ReduceOp op, double a, double b) {
  return op == ReduceOp::kSum ? a + b : op == ReduceOp::kMax ? std::max(a, b) : std::min(a, b);
}

// Reference: element k reduced over the group's devices.
std::vector<double> Reduced(ReduceOp op, const std::vector<int64_t>& group, int64_t count,
                            int64_t offset) {
  std::vector<double> out(count);
  for (int64_t k = 0; k < count; ++k) {
    out[k] = Value(group[0], offset + k);
    for (size_t p = 1; p < group.size(); ++p)
      out[k] = Reduce(op, out[k], Value(group[p], offset + k));
  }
  return out;
}

void ExpectAllOk(const std::vector<Status>& statuses) {
  for (size_t rank = 0; rank < statuses.size(); ++rank) {
    EXPECT_TRUE(statuses[rank].ok()) << "device " << rank << ": " << statuses[rank].ToString();
  }
}

const std::vector<ir::DType> kDTypes = {ir::DType::kF32, ir::DType::kF64, ir::DType::kS32,
                                        ir::DType::kF16, ir::DType::kBF16};
const std::vector<ReduceOp> kOps = {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin};

TEST(InProcessCommunicatorTest, AllReduceMatchesReference) {
  InProcessWorld world(kDevices);
  for (const Groups& groups : MeshPartitions()) {
    ExpectAllOk(RunOnDevices(world, [&](Communicator& comm) -> Status {
      const std::vector<int64_t>& group = GroupOf(groups, comm.rank());
      for (ir::DType dtype : kDTypes) {
        for (ReduceOp op : kOps) {
          // 1 and 7 leave most blocks empty or uneven; 4099 is not divisible by 2, 4 or 8.
          for (int64_t count : {1, 7, 1000, 4099}) {
            const Typed input = Encode(dtype, Values(comm.rank(), count));
            Typed output = Encode(dtype, std::vector<double>(count, 99));
            ALPA_RETURN_IF_ERROR(comm.AllReduce(group, op, input.view(), output.view()));
            ALPA_RETURN_IF_ERROR(Compare(fmt::format("{} {} {} x{}", GroupText(group),
                                                     ir::DTypeName(dtype), ReduceOpName(op), count),
                                         Decode(output), Reduced(op, group, count, 0)));
          }
        }
      }
      return Status::Ok();
    }));
  }
}

TEST(InProcessCommunicatorTest, AllReduceInPlace) {
  InProcessWorld world(4);
  const std::vector<int64_t> group = {0, 1, 2, 3};
  ExpectAllOk(RunOnDevices(world, [&](Communicator& comm) -> Status {
    Typed buffer = Encode(ir::DType::kF32, Values(comm.rank(), 1001));
    ALPA_RETURN_IF_ERROR(comm.AllReduce(group, ReduceOp::kSum, buffer.view(), buffer.view()));
    return Compare("in place", Decode(buffer), Reduced(ReduceOp::kSum, group, 1001, 0));
  }));
}

// Blocks of several slices (the engine reduces and copies 64 KiB at a time), an odd count, in
// place and not.
TEST(InProcessCommunicatorTest, AllReduceOfLargeOddBuffers) {
  InProcessWorld world(3);
  const std::vector<int64_t> group = {2, 0, 1};
  constexpr int64_t kCount = 3 * 40000 + 1;
  ExpectAllOk(RunOnDevices(world, [&](Communicator& comm) -> Status {
    for (ir::DType dtype : {ir::DType::kF32, ir::DType::kF64, ir::DType::kF16}) {
      const std::vector<double> want = Reduced(ReduceOp::kSum, group, kCount, 0);
      const Typed input = Encode(dtype, Values(comm.rank(), kCount));
      Typed output = Encode(dtype, std::vector<double>(kCount, 99));
      ALPA_RETURN_IF_ERROR(comm.AllReduce(group, ReduceOp::kSum, input.view(), output.view()));
      ALPA_RETURN_IF_ERROR(Compare(std::string(ir::DTypeName(dtype)), Decode(output), want));
      Typed buffer = Encode(dtype, Values(comm.rank(), kCount));
      ALPA_RETURN_IF_ERROR(comm.AllReduce(group, ReduceOp::kSum, buffer.view(), buffer.view()));
      ALPA_RETURN_IF_ERROR(Compare("in place", Decode(buffer), want));
    }
    return Status::Ok();
  }));
}

// 2048 + 1 + 1 + 1 in f16 (spacing 2 above 2048): a chain of f16 additions rounds every +1 away
// (2048), accumulating in f32 gives 2051, which rounds once to 2052 (ties to even). bf16 has
// spacing 2 above 256: 256 + 1 + 1 + 1 gives 260.
TEST(InProcessCommunicatorTest, HalfTypesAccumulateInF32AndRoundOnce) {
  InProcessWorld world(4);
  const std::vector<int64_t> group = {0, 1, 2, 3};
  for (auto [dtype, big, want] :
       {std::tuple{ir::DType::kF16, 2048.0, 2052.0}, std::tuple{ir::DType::kBF16, 256.0, 260.0}}) {
    ExpectAllOk(RunOnDevices(world, [&](Communicator& comm) -> Status {
      const Typed input = Encode(dtype, std::vector<double>(3, comm.rank() == 0 ? big : 1.0));
      Typed output = Encode(dtype, std::vector<double>(3, 0));
      ALPA_RETURN_IF_ERROR(comm.AllReduce(group, ReduceOp::kSum, input.view(), output.view()));
      ALPA_RETURN_IF_ERROR(Compare("all-reduce", Decode(output), {want, want, want}));
      Typed scattered = Encode(dtype, {0});
      Typed wide = Encode(dtype, std::vector<double>(4, comm.rank() == 0 ? big : 1.0));
      ALPA_RETURN_IF_ERROR(
          comm.ReduceScatter(group, ReduceOp::kSum, wide.view(), scattered.view()));
      return Compare("reduce-scatter", Decode(scattered), {want});
    }));
  }
}

TEST(InProcessCommunicatorTest, AllGatherMatchesReference) {
  InProcessWorld world(kDevices);
  for (const Groups& groups : MeshPartitions()) {
    ExpectAllOk(RunOnDevices(world, [&](Communicator& comm) -> Status {
      const std::vector<int64_t>& group = GroupOf(groups, comm.rank());
      const int64_t members = static_cast<int64_t>(group.size());
      for (ir::DType dtype : kDTypes) {
        for (int64_t count : {1, 7, 1000}) {
          const Typed input = Encode(dtype, Values(comm.rank(), count));
          Typed output = Encode(dtype, std::vector<double>(members * count, 99));
          ALPA_RETURN_IF_ERROR(comm.AllGather(group, input.view(), output.view()));
          std::vector<double> want;
          for (int64_t member : group) {
            const std::vector<double> block = Values(member, count);
            want.insert(want.end(), block.begin(), block.end());
          }
          ALPA_RETURN_IF_ERROR(
              Compare(fmt::format("{} x{}", GroupText(group), count), Decode(output), want));
          // In place: the input is this device's block of the output.
          Typed in_place = Encode(dtype, std::vector<double>(members * count, 99));
          const int64_t index = IndexOf(group, comm.rank());
          const size_t block_bytes = count * ir::DTypeByteSize(dtype);
          std::copy(input.bytes.begin(), input.bytes.end(),
                    in_place.bytes.begin() + index * block_bytes);
          const ConstBuffer own{dtype, in_place.bytes.data() + index * block_bytes, count};
          ALPA_RETURN_IF_ERROR(comm.AllGather(group, own, in_place.view()));
          ALPA_RETURN_IF_ERROR(Compare("in place", Decode(in_place), want));
        }
      }
      return Status::Ok();
    }));
  }
}

TEST(InProcessCommunicatorTest, ReduceScatterMatchesReference) {
  InProcessWorld world(kDevices);
  for (const Groups& groups : MeshPartitions()) {
    ExpectAllOk(RunOnDevices(world, [&](Communicator& comm) -> Status {
      const std::vector<int64_t>& group = GroupOf(groups, comm.rank());
      const int64_t members = static_cast<int64_t>(group.size());
      const int64_t index = IndexOf(group, comm.rank());
      for (ir::DType dtype : kDTypes) {
        for (ReduceOp op : kOps) {
          for (int64_t block : {1, 7, 513}) {
            const Typed input = Encode(dtype, Values(comm.rank(), members * block));
            Typed output = Encode(dtype, std::vector<double>(block, 99));
            ALPA_RETURN_IF_ERROR(comm.ReduceScatter(group, op, input.view(), output.view()));
            ALPA_RETURN_IF_ERROR(
                Compare(fmt::format("{} {} x{}", GroupText(group), ReduceOpName(op), block),
                        Decode(output), Reduced(op, group, block, index * block)));
          }
        }
      }
      return Status::Ok();
    }));
  }
}

TEST(InProcessCommunicatorTest, AllToAllMatchesReference) {
  InProcessWorld world(kDevices);
  for (const Groups& groups : MeshPartitions()) {
    ExpectAllOk(RunOnDevices(world, [&](Communicator& comm) -> Status {
      const std::vector<int64_t>& group = GroupOf(groups, comm.rank());
      const int64_t members = static_cast<int64_t>(group.size());
      const int64_t index = IndexOf(group, comm.rank());
      for (ir::DType dtype : kDTypes) {
        for (int64_t block : {1, 5, 300}) {
          const Typed input = Encode(dtype, Values(comm.rank(), members * block));
          Typed output = Encode(dtype, std::vector<double>(members * block, 99));
          ALPA_RETURN_IF_ERROR(comm.AllToAll(group, input.view(), output.view()));
          // Block j of the output is block `index` of member j's input.
          std::vector<double> want;
          for (int64_t member : group) {
            const std::vector<double> all = Values(member, members * block);
            want.insert(want.end(), all.begin() + index * block, all.begin() + (index + 1) * block);
          }
          ALPA_RETURN_IF_ERROR(
              Compare(fmt::format("{} x{}", GroupText(group), block), Decode(output), want));
        }
      }
      return Status::Ok();
    }));
  }
}

TEST(InProcessCommunicatorTest, BroadcastMatchesReference) {
  InProcessWorld world(kDevices);
  for (const Groups& groups : MeshPartitions()) {
    ExpectAllOk(RunOnDevices(world, [&](Communicator& comm) -> Status {
      const std::vector<int64_t>& group = GroupOf(groups, comm.rank());
      const int64_t root = group.back();
      for (ir::DType dtype : kDTypes) {
        Typed buffer = Encode(dtype, Values(comm.rank(), 333));
        ALPA_RETURN_IF_ERROR(comm.Broadcast(group, root, buffer.view()));
        ALPA_RETURN_IF_ERROR(Compare(GroupText(group), Decode(buffer), Values(root, 333)));
      }
      return Status::Ok();
    }));
  }
}

TEST(InProcessCommunicatorTest, CollectivePermuteShiftsAndZeroesNonTargets) {
  InProcessWorld world(kDevices);
  for (const Groups& groups : MeshPartitions()) {
    ExpectAllOk(RunOnDevices(world, [&](Communicator& comm) -> Status {
      const std::vector<int64_t>& group = GroupOf(groups, comm.rank());
      const int64_t members = static_cast<int64_t>(group.size());
      // member i sends to member i+1, except the last, so member 0 receives nothing.
      std::vector<SourceTarget> pairs;
      for (int64_t i = 0; i + 1 < members; ++i) pairs.push_back({group[i], group[i + 1]});
      const int64_t index = IndexOf(group, comm.rank());
      const Typed input = Encode(ir::DType::kF32, Values(comm.rank(), 77));
      Typed output = Encode(ir::DType::kF32, std::vector<double>(77, 99));
      ALPA_RETURN_IF_ERROR(comm.CollectivePermute(group, pairs, input.view(), output.view()));
      const std::vector<double> want =
          index == 0 ? std::vector<double>(77, 0) : Values(group[index - 1], 77);
      return Compare(GroupText(group), Decode(output), want);
    }));
  }
}

TEST(InProcessCommunicatorTest, SendRecvAlongAChain) {
  InProcessWorld world(4);
  // 0 -> 1 -> 2 -> 3, each adding nothing: device 3 ends with device 0's data.
  ExpectAllOk(RunOnDevices(world, [&](Communicator& comm) -> Status {
    Typed buffer = Encode(ir::DType::kBF16, Values(comm.rank(), 65));
    if (comm.rank() > 0) ALPA_RETURN_IF_ERROR(comm.Recv(comm.rank() - 1, buffer.view()));
    if (comm.rank() < 3) ALPA_RETURN_IF_ERROR(comm.Send(comm.rank() + 1, buffer.view()));
    return Compare("chain", Decode(buffer), Values(0, 65));
  }));
}

TEST(InProcessCommunicatorTest, BarrierWaitsForEveryMember) {
  InProcessWorld world(kDevices);
  std::atomic<int> before{0};
  const std::vector<int64_t> group = {0, 1, 2, 3, 4, 5, 6, 7};
  ExpectAllOk(RunOnDevices(world, [&](Communicator& comm) -> Status {
    for (int round = 1; round <= 3; ++round) {
      before.fetch_add(1);
      ALPA_RETURN_IF_ERROR(comm.Barrier(group));
      if (before.load() < round * kDevices) return Internal("left round {} early", round);
      ALPA_RETURN_IF_ERROR(comm.Barrier(group));
    }
    return Status::Ok();
  }));
}

TEST(InProcessCommunicatorTest, OneDeviceGroupIsTheIdentity) {
  InProcessWorld world(2);
  ExpectAllOk(RunOnDevices(world, [&](Communicator& comm) -> Status {
    const std::vector<int64_t> group = {comm.rank()};
    const Typed input = Encode(ir::DType::kF32, Values(comm.rank(), 9));
    Typed output = Encode(ir::DType::kF32, std::vector<double>(9, 0));
    ALPA_RETURN_IF_ERROR(comm.AllReduce(group, ReduceOp::kSum, input.view(), output.view()));
    return Compare("self", Decode(output), Values(comm.rank(), 9));
  }));
}

// Runs fn on every device of a fresh world and returns the statuses.
std::vector<Status> RunFresh(int64_t devices, const std::function<Status(Communicator&)>& fn,
                             double timeout_seconds = 10) {
  InProcessWorld world(devices, {.timeout_seconds = timeout_seconds});
  return RunOnDevices(world, fn);
}

TEST(InProcessCommunicatorTest, RejectsSizesThatDoNotSplit) {
  const std::vector<int64_t> group = {0, 1, 2};
  for (const Status& status : RunFresh(3, [&](Communicator& comm) {
         std::vector<float> input(10), output(3);
         return comm.ReduceScatter(group, ReduceOp::kSum, ViewOf(ir::DType::kF32, input),
                                   ViewOf(ir::DType::kF32, output));
       })) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), AllOf(HasSubstr("reduce-scatter over devices [0, 1, 2]"),
                                        HasSubstr("10 elements does not split into 3 blocks")));
  }
  for (const Status& status : RunFresh(3, [&](Communicator& comm) {
         std::vector<float> input(10), output(10);
         return comm.AllToAll(group, ViewOf(ir::DType::kF32, input),
                              ViewOf(ir::DType::kF32, output));
       })) {
    EXPECT_THAT(status.message(), AllOf(HasSubstr("all-to-all over devices [0, 1, 2]"),
                                        HasSubstr("divisible by the group size")));
  }
}

TEST(InProcessCommunicatorTest, MismatchedCallsFailOnEveryMember) {
  const std::vector<int64_t> group = {0, 1, 2, 3};
  // Device 2 gives a different count.
  for (const Status& status : RunFresh(4, [&](Communicator& comm) {
         std::vector<float> data(comm.rank() == 2 ? 9 : 8);
         return comm.AllReduce(group, ReduceOp::kSum, ViewOf(ir::DType::kF32, data),
                               ViewOf(ir::DType::kF32, data));
       })) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(),
                AllOf(HasSubstr("all-reduce over devices [0, 1, 2, 3]"), HasSubstr("disagree"),
                      HasSubstr("device 2: all-reduce sum f32[9] -> f32[9]"),
                      HasSubstr("device 0: all-reduce sum f32[8] -> f32[8]")));
  }
  // Device 1 calls another collective, device 3 another dtype.
  for (const Status& status : RunFresh(4, [&](Communicator& comm) {
         std::vector<float> f(8), gathered(32);
         std::vector<double> d(8);
         if (comm.rank() == 1) {
           return comm.AllGather(group, ViewOf(ir::DType::kF32, f),
                                 ViewOf(ir::DType::kF32, gathered));
         }
         if (comm.rank() == 3) {
           return comm.AllReduce(group, ReduceOp::kSum, ViewOf(ir::DType::kF64, d),
                                 ViewOf(ir::DType::kF64, d));
         }
         return comm.AllReduce(group, ReduceOp::kSum, ViewOf(ir::DType::kF32, f),
                               ViewOf(ir::DType::kF32, f));
       })) {
    EXPECT_THAT(status.message(),
                AllOf(HasSubstr("disagree"), HasSubstr("device 1: all-gather f32[8] -> f32[32]"),
                      HasSubstr("device 3: all-reduce sum f64[8]")));
  }
  // One device's own arguments are wrong: every member hears which.
  for (const Status& status : RunFresh(2, [&](Communicator& comm) {
         std::vector<float> input(4), output(comm.rank() == 1 ? 7 : 8);
         return comm.AllGather(std::vector<int64_t>{0, 1}, ViewOf(ir::DType::kF32, input),
                               ViewOf(ir::DType::kF32, output));
       })) {
    EXPECT_THAT(status.message(), HasSubstr("device 1: output has 7 elements; 2 blocks of the "
                                            "input's 4 are 8"));
  }
}

TEST(InProcessCommunicatorTest, BadGroupsAndTypesAreErrors) {
  std::vector<Status> statuses = RunFresh(2, [](Communicator& comm) {
    std::vector<float> data(4);
    const std::vector<int64_t> group =
        comm.rank() == 0 ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 1};
    return comm.AllReduce(group, ReduceOp::kSum, ViewOf(ir::DType::kF32, data),
                          ViewOf(ir::DType::kF32, data));
  });
  EXPECT_THAT(statuses[0].message(), HasSubstr("called on device 0, which is not in the group"));
  EXPECT_THAT(statuses[1].message(), HasSubstr("device 1 is listed twice"));
  statuses = RunFresh(2, [](Communicator& comm) {
    std::vector<int8_t> data(4);
    return comm.AllReduce(std::vector<int64_t>{0, 1, 2}, ReduceOp::kSum,
                          ViewOf(ir::DType::kPred, data), ViewOf(ir::DType::kPred, data));
  });
  EXPECT_THAT(statuses[0].message(), HasSubstr("device 2 is not one of the 2 devices"));
  statuses = RunFresh(2, [](Communicator& comm) {
    std::vector<int8_t> data(4);
    return comm.AllReduce(std::vector<int64_t>{0, 1}, ReduceOp::kSum,
                          ViewOf(ir::DType::kPred, data), ViewOf(ir::DType::kPred, data));
  });
  for (const Status& status : statuses) {
    EXPECT_THAT(status.message(), HasSubstr("a sum reduction of pred is not supported"));
  }
}

TEST(InProcessCommunicatorTest, MissingPeerTimesOutOnEveryWaitingMember) {
  constexpr double kTimeout = 0.2;
  InProcessWorld world(4, {.timeout_seconds = kTimeout});
  const std::vector<int64_t> group = {0, 1, 2, 3};
  std::latch others_failed(3);
  const auto start = std::chrono::steady_clock::now();
  std::vector<Status> statuses = RunOnDevices(world, [&](Communicator& comm) -> Status {
    std::vector<float> data(16, 1.0f);
    if (comm.rank() == 3) {
      // Arrives only after the others gave up: it must not touch their (gone) buffers.
      others_failed.wait();
      Status late = comm.AllReduce(group, ReduceOp::kSum, ViewOf(ir::DType::kF32, data),
                                   ViewOf(ir::DType::kF32, data));
      if (late.ok()) return Internal("the latecomer succeeded");
    } else {
      Status waited = comm.AllReduce(group, ReduceOp::kSum, ViewOf(ir::DType::kF32, data),
                                     ViewOf(ir::DType::kF32, data));
      others_failed.count_down();
      if (waited.ok()) return Internal("succeeded without device 3");
      if (waited.code() != StatusCode::kDeadlineExceeded) return waited;
      if (waited.message().find("all-reduce over devices [0, 1, 2, 3]: timed out after 0.2 s "
                                "waiting for device(s) 3 (arrived: 0, 1, 2)") ==
          std::string::npos) {
        return waited;
      }
    }
    // The world stays usable: the next call on the group is the next round for everyone.
    ALPA_RETURN_IF_ERROR(comm.AllReduce(group, ReduceOp::kSum, ViewOf(ir::DType::kF32, data),
                                        ViewOf(ir::DType::kF32, data)));
    return Compare("after the timeout", std::vector<double>(data.begin(), data.end()),
                   std::vector<double>(16, 4.0));
  });
  ExpectAllOk(statuses);
  // Not a timing figure: a guard that the failure ended the wait instead of hanging.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 20);
}

TEST(InProcessCommunicatorTest, LatecomerIsToldTheOthersGaveUp) {
  InProcessWorld world(2, {.timeout_seconds = 0.05});
  std::latch first_failed(1);
  std::vector<Status> statuses = RunOnDevices(world, [&](Communicator& comm) -> Status {
    if (comm.rank() == 1) first_failed.wait();
    Status status = comm.Barrier(std::vector<int64_t>{0, 1});
    if (comm.rank() == 0) first_failed.count_down();
    return status;
  });
  EXPECT_THAT(statuses[0].message(), HasSubstr("waiting for device(s) 1"));
  EXPECT_THAT(statuses[1].message(),
              AllOf(HasSubstr("barrier over devices [0, 1]: device 1 arrived after the others "
                              "gave up"),
                    HasSubstr("timed out")));
}

TEST(InProcessCommunicatorTest, UnmatchedSendTimesOut) {
  std::vector<Status> statuses = RunFresh(
      2,
      [](Communicator& comm) -> Status {
        if (comm.rank() == 1) return Status::Ok();
        std::vector<float> data(4);
        return comm.Send(1, ViewOf(ir::DType::kF32, data));
      },
      0.05);
  EXPECT_THAT(statuses[0].message(),
              AllOf(HasSubstr("send from device 0 to device 1"), HasSubstr("device(s) 1")));
}

}  // namespace
}  // namespace alpa::runtime
