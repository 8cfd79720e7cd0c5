// Shape rules of collectives (shape_inference_collectives.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir_test_util.h"

namespace alpa::ir {
namespace {

using ::testing::HasSubstr;

using CollectiveShapeTest = IrTest;

TEST_F(CollectiveShapeTest, AllReduceKeepsShapes) {
  Computation* add = mb_.ScalarReducer(Opcode::kAdd, DType::kF32);
  Instruction* x = Param(F32({4, 8}));
  EXPECT_EQ(S(b_.AllReduce(x, add, {{0, 1}, {2, 3}})), "f32[4,8]");
  Instruction* y = Param(F32({3}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kAllReduce, {x, y}, {}, {add})), "(f32[4,8], f32[3])");
  Instruction* start = b_.AddInstruction(Opcode::kAllReduceStart, {x}, {}, {add});
  EXPECT_EQ(S(start), "f32[4,8]");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kAllReduceDone, {start})), "f32[4,8]");
  Computation* add_s32 = mb_.ScalarReducer(Opcode::kAdd, DType::kS32);
  EXPECT_EQ(b_.AllReduce(x, add_s32), nullptr);
  EXPECT_THAT(Error(), HasSubstr("reducer %add.s32 has signature (s32[], s32[])->s32[] but must be "
                                 "(f32[], f32[])->f32[]"));
}

TEST_F(CollectiveShapeTest, AsyncHalvesOfAllReduceCheckTheirOperands) {
  Computation* add_s32 = mb_.ScalarReducer(Opcode::kAdd, DType::kS32);
  // all-reduce-start checks its reducer as all-reduce does.
  EXPECT_EQ(b_.AddInstruction(Opcode::kAllReduceStart, {Param(F32({2}))}, {}, {add_s32}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("all-reduce-start %all-reduce-start.1: reducer %add.s32 has "
                                 "signature (s32[], s32[])->s32[] but must be (f32[], "
                                 "f32[])->f32[]"));
  Reset();
  Instruction* x = Param(F32({2}));
  EXPECT_EQ(b_.AddInstruction(Opcode::kAllReduceDone, {x, x}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("all-reduce-done %all-reduce-done.1: expects 1 operand(s) but "
                                 "has 2"));
}

TEST_F(CollectiveShapeTest, BroadcastAndPermuteKeepShapesButNeedAnOperand) {
  Instruction* x = Param(F32({2, 0}));
  Instruction* y = Param(S32({}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kCollectiveBroadcast, {x, y})), "(f32[2,0], s32[])");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kCollectivePermute, {x})), "f32[2,0]");
  EXPECT_EQ(b_.AddInstruction(Opcode::kCollectiveBroadcast, {}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("collective-broadcast %collective-broadcast.2: expects at least "
                                 "1 operand(s) but has 0"));
  Reset();
  EXPECT_EQ(b_.AddInstruction(Opcode::kCollectivePermute, {}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("expects at least 1 operand(s) but has 0"));
  Reset();
  // collective-permute-done takes element 1 (the received buffer) of the start tuple.
  EXPECT_EQ(b_.AddInstruction(Opcode::kCollectivePermuteDone, {Param(F32({2}))}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("operand must be the tuple of a -start op but has shape f32[2]"));
}

TEST_F(CollectiveShapeTest, AllGatherGrowsByGroupSize) {
  Instruction* x = Param(F32({4, 8}));
  EXPECT_EQ(S(b_.AllGather(x, 1, {{0, 1, 2, 3}})), "f32[4,32]");
  EXPECT_EQ(S(b_.AllGather(x, 0, {{0, 1}, {2, 3}})), "f32[8,8]");
}

// PyTorch/XLA appends its ordering token, a scalar, to every all-gather and reduce-scatter.
TEST_F(CollectiveShapeTest, VariadicGatherAndScatterPassAScalarThrough) {
  Attributes attributes;
  attributes.dimensions = {0};
  attributes.replica_groups = ReplicaGroups{{{0, 1}}, std::nullopt};
  Instruction* x = Param(F32({4, 3}));
  Instruction* token = Param(F32({}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kAllGather, {x, token}, attributes)), "(f32[8,3], f32[])");
  Computation* add = mb_.ScalarReducer(Opcode::kAdd, DType::kF32);
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kReduceScatter, {x, token}, attributes, {add})),
            "(f32[2,3], f32[])");
  // Alone, a scalar has no dimension 0 to gather along.
  EXPECT_EQ(b_.AddInstruction(Opcode::kAllGather, {token}, attributes), nullptr);
  EXPECT_THAT(Error(), HasSubstr("dimensions entry 0 is out of range [0, 0)"));
}

TEST_F(CollectiveShapeTest, AllGatherWithoutGroupsAcceptsAMultiple) {
  Attributes attributes;
  attributes.dimensions = {0};
  Instruction* x = Param(F32({4, 8}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kAllGather, {x}, attributes, {}, F32({16, 8}))),
            "f32[16,8]");
  EXPECT_EQ(b_.AddInstruction(Opcode::kAllGather, {x}, attributes, {}, F32({6, 8})), nullptr);
  EXPECT_THAT(Error(), HasSubstr("without replica_groups the declared dimension 0 must be a "
                                 "multiple of the operand's size 4"));
}

TEST_F(CollectiveShapeTest, AllGatherStartAndDone) {
  Attributes attributes;
  attributes.dimensions = {0};
  attributes.replica_groups = ReplicaGroups{{{0, 1}}, std::nullopt};
  Instruction* x = Param(F32({4}));
  Instruction* start = b_.AddInstruction(Opcode::kAllGatherStart, {x}, attributes);
  EXPECT_EQ(S(start), "(f32[4], f32[8])");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kAllGatherDone, {start})), "f32[8]");
  EXPECT_EQ(b_.AddInstruction(Opcode::kAllGatherDone, {x}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("operand must be the tuple of a -start op but has shape f32[4]"));
}

TEST_F(CollectiveShapeTest, AllGatherStartNeedsADimensionToGather) {
  Attributes attributes;
  attributes.replica_groups = ReplicaGroups{{{0, 1, 2}}, std::nullopt};
  attributes.dimensions = {1};
  // Gathering dimension 1 of 3 devices: 2 -> 6.
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kAllGatherStart, {Param(F32({4, 2}))}, attributes)),
            "(f32[4,2], f32[4,6])");
  EXPECT_EQ(b_.AddInstruction(Opcode::kAllGatherStart, {Param(F32({4}))}, attributes), nullptr);
  EXPECT_THAT(Error(), HasSubstr("all-gather-start %all-gather-start.2: dimensions entry 1 is out "
                                 "of range [0, 1)"));
}

TEST_F(CollectiveShapeTest, ReduceScatterShrinksByGroupSize) {
  Computation* add = mb_.ScalarReducer(Opcode::kAdd, DType::kF32);
  Instruction* x = Param(F32({8, 6}));
  EXPECT_EQ(S(b_.ReduceScatter(x, 0, add, {{0, 1, 2, 3}})), "f32[2,6]");
  EXPECT_EQ(b_.ReduceScatter(x, 1, add, {{0, 1, 2, 3}}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("dimension 1 of operand 0 has size 6, not divisible by the "
                                 "replica group size 4"));
}

TEST_F(CollectiveShapeTest, ReduceScatterWithoutGroupsAcceptsADivisor) {
  Computation* add = mb_.ScalarReducer(Opcode::kAdd, DType::kF32);
  Attributes attributes;
  attributes.dimensions = {0};
  Instruction* x = Param(F32({8}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kReduceScatter, {x}, attributes, {add}, F32({2}))),
            "f32[2]");
  EXPECT_EQ(b_.AddInstruction(Opcode::kReduceScatter, {x}, attributes, {add}, F32({3})), nullptr);
  EXPECT_THAT(Error(), HasSubstr("must be a divisor of the operand's size 8"));
}

TEST_F(CollectiveShapeTest, AllToAll) {
  Instruction* x = Param(F32({8, 3}));
  EXPECT_EQ(S(b_.AllToAll(x, 0, {{0, 1, 2, 3}})), "f32[8,3]");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kAllToAll, {x, Param(F32({2}))})), "(f32[8,3], f32[2])");
  EXPECT_EQ(b_.AllToAll(x, 1, {{0, 1}}), nullptr);
  EXPECT_THAT(Error(), HasSubstr("split dimension 1 has size 3, not divisible by the replica group "
                                 "size 2"));
}

TEST_F(CollectiveShapeTest, CollectivePermuteAndIds) {
  Instruction* x = Param(F32({5}));
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kCollectivePermute, {x})), "f32[5]");
  Shape start_shape = Shape::Tuple({F32({5}), F32({5}), Shape::Scalar(DType::kU32)});
  Instruction* start = b_.AddInstruction(Opcode::kCollectivePermuteStart, {x}, {}, {}, start_shape);
  EXPECT_EQ(S(start), "(f32[5], f32[5], u32[])");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kCollectivePermuteDone, {start})), "f32[5]");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kPartitionId, {})), "u32[]");
  EXPECT_EQ(S(b_.AddInstruction(Opcode::kReplicaId, {})), "u32[]");
  EXPECT_EQ(b_.AddInstruction(Opcode::kCollectivePermuteStart, {x}, {}, {}, F32({5})), nullptr);
  EXPECT_THAT(Error(), HasSubstr("declared shape f32[5] must be a tuple starting with (f32[5], "
                                 "f32[5])"));
}

}  // namespace
}  // namespace alpa::ir
