// Literal storage: large blocks come back from the cache in the same size, small ones go to the C
// library, every block is 64-byte aligned, and CreateUninitialized gives the shape's bytes.
#include "ir/buffer_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "ir/literal.h"

namespace alpa::ir {
namespace {

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

TEST(BufferAllocatorTest, ALargeBlockIsReusedForTheSameSize) {
  const size_t bytes = (size_t{3} << 20) + 5;  // rounded up to whole pages in the cache
  void* first = AllocateBuffer(bytes);
  ASSERT_TRUE(Aligned(first));
  const size_t cached = CachedBufferBytes();
  ReleaseBuffer(first, bytes);
  EXPECT_GE(CachedBufferBytes(), cached + bytes);
  void* second = AllocateBuffer(bytes);
  EXPECT_EQ(second, first);
  EXPECT_EQ(CachedBufferBytes(), cached);
  ReleaseBuffer(second, bytes);
  // A request the block fits with little to spare gets it; one it would fit with over a quarter
  // to spare, or one it is too small for, does not.
  void* smaller = AllocateBuffer(bytes - 4096);
  EXPECT_EQ(smaller, first);
  void* much_smaller = AllocateBuffer(bytes / 2);
  void* larger = AllocateBuffer(bytes + 8192);
  EXPECT_NE(much_smaller, first);
  EXPECT_NE(larger, first);
  ReleaseBuffer(smaller, bytes - 4096);
  ReleaseBuffer(much_smaller, bytes / 2);
  ReleaseBuffer(larger, bytes + 8192);
}

TEST(BufferAllocatorTest, SmallBlocksAreNotCached) {
  const size_t cached = CachedBufferBytes();
  void* block = AllocateBuffer(100);
  EXPECT_TRUE(Aligned(block));
  ReleaseBuffer(block, 100);
  EXPECT_EQ(CachedBufferBytes(), cached);
}

TEST(BufferAllocatorTest, LiteralsOfEveryKind) {
  const Shape shape = Shape::Array(DType::kF32, {512, 300});
  Literal uninitialized = Literal::CreateUninitialized(shape);
  EXPECT_EQ(uninitialized.size_bytes(), 512 * 300 * 4);
  EXPECT_TRUE(Aligned(uninitialized.data()));
  Literal zeros = Literal::CreateZeros(shape);
  for (int64_t i = 0; i < zeros.element_count(); ++i) ASSERT_EQ(zeros.typed_data<float>()[i], 0);
  Literal copy = zeros;
  EXPECT_TRUE(copy == zeros);
  Literal tuple = Literal::CreateUninitialized(Shape::Tuple({shape, Shape::Scalar(DType::kS32)}));
  EXPECT_EQ(tuple.tuple_element(0).size_bytes(), 512 * 300 * 4);
  EXPECT_EQ(tuple.tuple_element(1).size_bytes(), 4);
}

}  // namespace
}  // namespace alpa::ir
