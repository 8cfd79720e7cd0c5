// The in-process mailbox (runtime/mailbox.h): a post never waits for its receiver, a take waits
// for its message, and a message of another shape or one that never comes is an error naming it.
// The MPI engine's tests are in mpi_communicator_test.cc.
#include "runtime/mailbox.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace alpa::runtime {
namespace {

using ::testing::HasSubstr;

const ir::Shape kVector = ir::Shape::Array(ir::DType::kF32, {3});

TEST(InProcessMailboxTest, ATakeWaitsForItsMessage) {
  InProcessMailbox mailbox(5);
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(mailbox.Post(0, 1, 4, ir::Literal::FromDoubles(kVector, {1, 2, 3})).ok());
  });
  Result<ir::Literal> message = mailbox.Take(0, 1, 4, kVector);
  sender.join();
  ASSERT_TRUE(message.ok()) << message.status().message();
  EXPECT_EQ(message->GetDouble(2), 3.0);
  EXPECT_TRUE(mailbox.Flush(0).ok());
}

TEST(InProcessMailboxTest, PostsOfEveryDeviceGoThroughBeforeAnyTake) {
  InProcessMailbox mailbox(5);
  for (int64_t source = 0; source < 3; ++source) {
    for (int64_t target = 0; target < 3; ++target) {
      ASSERT_TRUE(
          mailbox.Post(source, target, 1, ir::Literal::Scalar(ir::DType::kF64, source)).ok());
    }
  }
  for (int64_t source = 0; source < 3; ++source) {
    EXPECT_EQ(mailbox.Take(source, 2, 1, ir::Shape::Array(ir::DType::kF64, {}))->GetDouble(0),
              static_cast<double>(source));
  }
}

TEST(InProcessMailboxTest, AWrongDuplicateOrMissingMessageIsNamed) {
  InProcessMailbox mailbox(0.05);
  ASSERT_TRUE(mailbox.Post(0, 1, 4, ir::Literal::FromDoubles(kVector, {1, 2, 3})).ok());
  EXPECT_THAT(mailbox.Post(0, 1, 4, ir::Literal::FromDoubles(kVector, {1, 2, 3})).message(),
              HasSubstr("message 4 from device 0 to device 1 posted again before it was taken"));
  EXPECT_THAT(mailbox.Take(0, 1, 4, ir::Shape::Array(ir::DType::kF32, {4})).status().message(),
              HasSubstr("message 4 from device 0 is f32[3], device 1 expects f32[4]"));
  const Result<ir::Literal> missing = mailbox.Take(2, 1, 4, kVector);
  EXPECT_EQ(missing.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(missing.status().message(), HasSubstr("no message 4 from device 2 within 0.05 s"));
}

}  // namespace
}  // namespace alpa::runtime
