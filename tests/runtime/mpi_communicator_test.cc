// The MPI engine of the communicator, run by ctest as `mpirun -np 4 mpi_communicator_test`: every
// rank runs every test as one device, and the values are checked against hand-computed ones, as
// the in-process engine's tests do, over all four devices and over the rows and columns of a 2x2
// mesh. A rank that skips a call makes its peer's call time out with the group named. The
// mailbox (tagged messages of pipelined programs) never blocks a sender.
#include "runtime/mpi_communicator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "ir/element_type.h"

namespace alpa::runtime {
namespace {

using ::testing::HasSubstr;

constexpr double kTimeoutSeconds = 2;
MpiWorld* world = nullptr;

Communicator& Device() { return world->communicator(); }
int64_t Rank() { return world->rank(); }
const std::vector<int64_t> kAll = {0, 1, 2, 3};

class MpiCommunicatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (world->size() != 4) GTEST_SKIP() << "run under mpirun -np 4";
  }
};

TEST_F(MpiCommunicatorTest, AllReduceSumsMaxesAndWrapsLikeTheInProcessEngine) {
  std::vector<float> input = {1.0f * static_cast<float>(Rank()), 10.0f, -1.0f};
  std::vector<float> output(3);
  ASSERT_TRUE(Device()
                  .AllReduce(kAll, ReduceOp::kSum, ViewOf(ir::DType::kF32, input),
                             ViewOf(ir::DType::kF32, output))
                  .ok());
  EXPECT_EQ(output, (std::vector<float>{6, 40, -4}));
  ASSERT_TRUE(Device()
                  .AllReduce(kAll, ReduceOp::kMax, ViewOf(ir::DType::kF32, input),
                             ViewOf(ir::DType::kF32, input))
                  .ok());  // in place
  EXPECT_EQ(input, (std::vector<float>{3, 10, -1}));
  // Integer sums wrap modulo 2^8.
  std::vector<int8_t> bytes = {100};
  ASSERT_TRUE(Device()
                  .AllReduce(kAll, ReduceOp::kSum, ViewOf(ir::DType::kS8, bytes),
                             ViewOf(ir::DType::kS8, bytes))
                  .ok());
  EXPECT_EQ(bytes[0], static_cast<int8_t>(400 - 512));
}

TEST_F(MpiCommunicatorTest, HalfPrecisionSumsAccumulateInF32AndRoundOnce) {
  // 2048 + 1 + 1 + 1 in f16: chained f16 additions stay at 2048 (the spacing there is 2); one
  // rounding of the f32 sum 2051 gives 2052.
  std::vector<Eigen::half> input = {Eigen::half(Rank() == 0 ? 2048.0f : 1.0f)};
  std::vector<Eigen::half> output(1);
  ASSERT_TRUE(Device()
                  .AllReduce(kAll, ReduceOp::kSum, ViewOf(ir::DType::kF16, input),
                             ViewOf(ir::DType::kF16, output))
                  .ok());
  EXPECT_EQ(static_cast<float>(output[0]), 2052.0f);
}

TEST_F(MpiCommunicatorTest, GatherScatterAndAllToAllPlaceBlocksInGroupOrder) {
  const float r = static_cast<float>(Rank());
  std::vector<float> mine = {r, r + 0.5f};
  std::vector<float> gathered(8);
  ASSERT_TRUE(Device()
                  .AllGather(kAll, ViewOf(ir::DType::kF32, mine), ViewOf(ir::DType::kF32, gathered))
                  .ok());
  EXPECT_EQ(gathered, (std::vector<float>{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5}));
  // A reversed group gathers in its own order.
  const std::vector<int64_t> reversed = {3, 2, 1, 0};
  ASSERT_TRUE(
      Device()
          .AllGather(reversed, ViewOf(ir::DType::kF32, mine), ViewOf(ir::DType::kF32, gathered))
          .ok());
  EXPECT_EQ(gathered, (std::vector<float>{3, 3.5, 2, 2.5, 1, 1.5, 0, 0.5}));

  std::vector<float> rows = {r, 10 * r, 100 * r, 1000 * r};  // block j goes to index j
  std::vector<float> block(1);
  ASSERT_TRUE(Device()
                  .ReduceScatter(kAll, ReduceOp::kSum, ViewOf(ir::DType::kF32, rows),
                                 ViewOf(ir::DType::kF32, block))
                  .ok());
  const float scale[] = {1, 10, 100, 1000};
  EXPECT_EQ(block[0], 6 * scale[Rank()]);

  std::vector<float> sent = {10 * r + 0, 10 * r + 1, 10 * r + 2, 10 * r + 3};
  std::vector<float> received(4);
  ASSERT_TRUE(Device()
                  .AllToAll(kAll, ViewOf(ir::DType::kF32, sent), ViewOf(ir::DType::kF32, received))
                  .ok());
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(received[i], 10 * i + r);
}

TEST_F(MpiCommunicatorTest, RowsAndColumnsOfATwoByTwoMeshReduceApart) {
  // Mesh [[0, 1], [2, 3]]: a row is {2 * (r / 2), 2 * (r / 2) + 1}, a column {r % 2, r % 2 + 2}.
  const std::vector<int64_t> row = {2 * (Rank() / 2), 2 * (Rank() / 2) + 1};
  const std::vector<int64_t> column = {Rank() % 2, Rank() % 2 + 2};
  std::vector<int32_t> value = {static_cast<int32_t>(Rank())};
  std::vector<int32_t> row_sum(1), column_sum(1);
  ASSERT_TRUE(Device()
                  .AllReduce(row, ReduceOp::kSum, ViewOf(ir::DType::kS32, value),
                             ViewOf(ir::DType::kS32, row_sum))
                  .ok());
  ASSERT_TRUE(Device()
                  .AllReduce(column, ReduceOp::kSum, ViewOf(ir::DType::kS32, value),
                             ViewOf(ir::DType::kS32, column_sum))
                  .ok());
  EXPECT_EQ(row_sum[0], Rank() < 2 ? 1 : 5);
  EXPECT_EQ(column_sum[0], Rank() % 2 == 0 ? 2 : 4);
}

TEST_F(MpiCommunicatorTest, BroadcastPermuteAndMessages) {
  std::vector<double> value = {Rank() == 2 ? 7.0 : 0.0};
  ASSERT_TRUE(Device().Broadcast(kAll, 2, ViewOf(ir::DType::kF64, value)).ok());
  EXPECT_EQ(value[0], 7.0);

  // 0 -> 1 -> 2 -> 0; device 3 is no target and gets zeros.
  const std::vector<SourceTarget> pairs = {{0, 1}, {1, 2}, {2, 0}};
  std::vector<float> input = {static_cast<float>(Rank() + 1)};
  std::vector<float> output = {-1};
  ASSERT_TRUE(Device()
                  .CollectivePermute(kAll, pairs, ViewOf(ir::DType::kF32, input),
                                     ViewOf(ir::DType::kF32, output))
                  .ok());
  const float expected[] = {3, 1, 2, 0};
  EXPECT_EQ(output[0], expected[Rank()]);

  std::vector<int64_t> message = {Rank() * 11};
  if (Rank() == 0) {
    ASSERT_TRUE(Device().Send(3, ViewOf(ir::DType::kS64, message)).ok());
  } else if (Rank() == 3) {
    ASSERT_TRUE(Device().Recv(0, ViewOf(ir::DType::kS64, message)).ok());
    EXPECT_EQ(message[0], 0);
  }
  ASSERT_TRUE(Device().Barrier(kAll).ok());
}

TEST_F(MpiCommunicatorTest, BadCallsAreRejectedBeforeMeetingThePeers) {
  std::vector<float> input(3), output(4);
  Status status = Device().AllReduce(kAll, ReduceOp::kSum, ViewOf(ir::DType::kF32, input),
                                     ViewOf(ir::DType::kF32, output));
  EXPECT_THAT(status.message(), HasSubstr("all-reduce over devices [0, 1, 2, 3]: input has 3 "
                                          "elements but output has 4"));
  const std::vector<int64_t> others = {(Rank() + 1) % 4};
  status = Device().Barrier(others);
  EXPECT_THAT(status.message(), HasSubstr("which is not in the group"));
}

// Every device posts a 64 KiB message to every device, itself included, before it takes any:
// with synchronous sends the four would wait on each other for ever. A tag used twice between
// two devices delivers in posting order.
TEST_F(MpiCommunicatorTest, PostedMessagesNeverWaitForTheirReceivers) {
  Mailbox& mailbox = world->mailbox();
  const ir::Shape shape = ir::Shape::Array(ir::DType::kF32, {128, 128});
  for (int64_t target = 0; target < 4; ++target) {
    ASSERT_TRUE(mailbox
                    .Post(Rank(), target, 100 + Rank(),
                          ir::Literal::FromDoubles(
                              shape, std::vector<double>(128 * 128, Rank() * 10 + target)))
                    .ok());
  }
  if (Rank() == 0) {
    for (double value : {1.0, 2.0}) {
      ASSERT_TRUE(mailbox.Post(0, 1, 7, ir::Literal::Scalar(ir::DType::kF64, value)).ok());
    }
  }
  for (int64_t source = 0; source < 4; ++source) {
    Result<ir::Literal> message = mailbox.Take(source, Rank(), 100 + source, shape);
    ASSERT_TRUE(message.ok()) << message.status().message();
    EXPECT_EQ(message->GetDouble(128 * 128 - 1), static_cast<double>(source * 10 + Rank()));
  }
  if (Rank() == 1) {
    const ir::Shape scalar = ir::Shape::Array(ir::DType::kF64, {});
    EXPECT_EQ(mailbox.Take(0, 1, 7, scalar)->GetDouble(0), 1.0);
    EXPECT_EQ(mailbox.Take(0, 1, 7, scalar)->GetDouble(0), 2.0);
  }
  EXPECT_TRUE(mailbox.Flush(Rank()).ok());
  ASSERT_TRUE(Device().Barrier(kAll).ok());
}

// A message of another size than the receiver expects, and one that never comes, are errors that
// name the message; the missing one's receive is withdrawn after the timeout.
TEST_F(MpiCommunicatorTest, AWrongOrMissingMessageIsNamed) {
  Mailbox& mailbox = world->mailbox();
  if (Rank() == 0) {
    ASSERT_TRUE(
        mailbox.Post(0, 1, 9, ir::Literal::CreateZeros(ir::Shape::Array(ir::DType::kF32, {4})))
            .ok());
    EXPECT_TRUE(mailbox.Flush(0).ok());
    EXPECT_THAT(mailbox.Post(1, 0, 9, ir::Literal()).message(), HasSubstr("cannot act for it"));
  } else if (Rank() == 1) {
    Result<ir::Literal> shorter = mailbox.Take(0, 1, 9, ir::Shape::Array(ir::DType::kF32, {8}));
    EXPECT_THAT(shorter.status().message(),
                HasSubstr("message 9 from device 0 on device 1: 16 bytes arrived for f32[8]"));
    Result<ir::Literal> missing = mailbox.Take(2, 1, 10, ir::Shape::Array(ir::DType::kF32, {8}));
    EXPECT_EQ(missing.status().code(), StatusCode::kDeadlineExceeded);
    EXPECT_THAT(missing.status().message(),
                HasSubstr("message 10 from device 2 on device 1: timed out after 2 s"));
  }
  if (Rank() != 1) {  // so that the barrier below does not time out before device 1 arrives
    std::this_thread::sleep_for(std::chrono::duration<double>(1.25 * kTimeoutSeconds));
  }
  ASSERT_TRUE(Device().Barrier(kAll).ok());
}

// Last: the skipped call's request stays posted on device 0 until device 1 makes it late.
TEST_F(MpiCommunicatorTest, APeerThatNeverArrivesTimesOutNamingTheCollectiveAndGroup) {
  static std::vector<float> late(1);  // outlives the test: the late call still writes it
  const std::vector<int64_t> pair = {0, 1};
  if (Rank() == 0) {
    const auto start = std::chrono::steady_clock::now();
    Status status = Device().AllReduce(pair, ReduceOp::kSum, ViewOf(ir::DType::kF32, late),
                                       ViewOf(ir::DType::kF32, late));
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
    EXPECT_THAT(status.message(), HasSubstr("all-reduce over devices [0, 1]: timed out after 2 s"));
    EXPECT_LT(waited, 2 * kTimeoutSeconds);
  } else {
    // Devices 2 and 3 wait too, so that their barrier below does not time out before device 0's.
    std::this_thread::sleep_for(std::chrono::duration<double>(1.25 * kTimeoutSeconds));
    if (Rank() == 1) {
      EXPECT_TRUE(Device()
                      .AllReduce(pair, ReduceOp::kSum, ViewOf(ir::DType::kF32, late),
                                 ViewOf(ir::DType::kF32, late))
                      .ok());
    }
  }
  ASSERT_TRUE(Device().Barrier(kAll).ok());
}

}  // namespace
}  // namespace alpa::runtime

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  alpa::runtime::MpiOptions options;
  options.timeout_seconds = alpa::runtime::kTimeoutSeconds;
  auto world = alpa::runtime::MpiWorld::Init(options);
  if (!world.ok()) {
    std::fprintf(stderr, "%s\n", world.status().message().c_str());
    return 1;
  }
  alpa::runtime::world = world->get();
  // Only rank 0 prints gtest's report; every rank's failures still fail the run (exit code).
  if ((*world)->rank() != 0) {
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  }
  return RUN_ALL_TESTS();
}
