// Each attribute form, parsed into its typed field and printed back.
#include <gtest/gtest.h>

#include "hlo/printer.h"
#include "test_util.h"

namespace alpa::hlo {
namespace {

using testing::Get;
using testing::ParseOk;

constexpr std::string_view kModule = R"(
HloModule attrs

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ge {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=GE
}

ENTRY main {
  p = f32[8,16]{1,0} parameter(0)
  w = f32[16,32]{1,0} parameter(1)
  i = s32[4,1] parameter(2)
  img = f32[1,8,8,3] parameter(3)
  k = f32[3,3,3,16] parameter(4)
  zero = f32[] constant(0)
  dot = f32[8,32]{1,0} dot(p, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
  bdot = f32[2,4,4] dot(b1, b2), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  b1 = f32[2,4,3] parameter(5)
  b2 = f32[2,3,4] parameter(6)
  bc = f32[8,16,4] broadcast(p), dimensions={0,1}
  tr = f32[16,8]{0,1} transpose(p), dimensions={1,0}
  sl = f32[4,8] slice(p), slice={[0:8:2], [0:8]}
  pd = f32[9,20] pad(p, zero), padding=0_1x1_3_0
  pi = f32[15,16] pad(p, zero), padding=0_0_1x0_0
  cmp = pred[8,16] compare(p, p), direction=LT, type=TOTALORDER
  io = s32[4] iota(), iota_dimension=0
  ds = f32[2,16] dynamic-slice(p, io.0, io.0), dynamic_slice_sizes={2,16}
  io.0 = s32[] constant(1)
  red = f32[8] reduce(p, zero), dimensions={1}, to_apply=add
  rw = f32[4,8] reduce-window(p, zero), window={size=2x2 stride=2x2 pad=0_0x0_0}, to_apply=add
  sas = f32[8,16] select-and-scatter(p, rw, zero), window={size=2x2 stride=2x2}, select=ge, scatter=add
  conv = f32[1,6,6,16] convolution(img, k), window={size=3x3 pad=0_0x0_0 rhs_dilate=1x1 lhs_dilate=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=1
  g = f32[4,16] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}, indices_are_sorted=true
  sc = f32[8,16] scatter(p, i, g), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add, unique_indices=true
  ar = f32[8,16] all-reduce(p), channel_id=3, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=add
  ag = f32[64,16] all-gather(p), dimensions={0}, replica_groups=[2,4]<=[4,2]T(1,0)
  rs = f32[2,16] reduce-scatter(p), dimensions={0}, replica_groups=[1,4]<=[4], to_apply=add
  a2a = f32[8,16] all-to-all(p), dimensions={0}, replica_groups={}
  cp = f32[8,16] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,0}}
  cc = f32[8,16] custom-call(p), custom_call_target="Sharding", sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}, api_version=API_VERSION_STATUS_RETURNING, custom_call_has_side_effect=true
  bn = (f32[1,8,8,3], f32[3], f32[3]) batch-norm-training(img, s3, s3), epsilon=1e-05, feature_index=3
  s3 = f32[3] parameter(7)
  gte = f32[1,8,8,3] get-tuple-element(bn), index=0
  rp = f32[8,16] reduce-precision(p), exponent_bits=5, mantissa_bits=10
  srt = f32[8,16] sort(p), dimensions={1}, is_stable=true, to_apply=ge
  rbg = (u64[2], u32[4]) rng-bit-generator(st), algorithm=rng_default
  st = u64[2] parameter(8)
  ROOT out = f32[8,32]{1,0} add(dot, dot), metadata={op_type="aten__addmm" op_name="jit(f)/dot" source_line=114}, frontend_attributes={neff_output_names="output0,output1",grad_x="false"}, backend_config={"known_trip_count":{"n":"11"}}, control-predecessors={cp, cc}
}
)";

class AttributesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    module_ = ParseOk(kModule);
    ASSERT_NE(module_, nullptr);
  }
  const ir::Instruction& I(std::string_view name) { return Get(*module_, name); }
  const ir::Attributes& A(std::string_view name) { return I(name).attributes(); }
  std::unique_ptr<ir::Module> module_;
};

TEST_F(AttributesTest, DotDimensions) {
  const auto& dot = *A("dot").dot_dims;
  EXPECT_EQ(dot.lhs_contracting_dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(dot.rhs_contracting_dims, (std::vector<int64_t>{0}));
  EXPECT_TRUE(dot.lhs_batch_dims.empty());
  EXPECT_EQ(A("bdot").dot_dims->rhs_batch_dims, (std::vector<int64_t>{0}));
  ASSERT_EQ(A("dot").opaque.size(), 1u);
  EXPECT_EQ(A("dot").opaque[0], (std::pair<std::string, std::string>{"operand_precision",
                                                                     "{highest,highest}"}));
  EXPECT_EQ(PrintInstruction(I("dot")),
            "%dot = f32[8,32]{1,0} dot(%p, %w), lhs_contracting_dims={1}, "
            "rhs_contracting_dims={0}, operand_precision={highest,highest}");
}

TEST_F(AttributesTest, DimensionsSlicePaddingIota) {
  EXPECT_EQ(A("bc").dimensions, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(I("tr").shape().layout()->minor_to_major, (std::vector<int64_t>{0, 1}));
  ASSERT_EQ(A("sl").slice.size(), 2u);
  EXPECT_EQ(A("sl").slice[0], (ir::SliceDim{0, 8, 2}));
  EXPECT_EQ(A("sl").slice[1], (ir::SliceDim{0, 8, 1}));
  EXPECT_EQ(PrintInstruction(I("sl")), "%sl = f32[4,8] slice(%p), slice={[0:8:2], [0:8]}");
  ASSERT_EQ(A("pd").padding.size(), 2u);
  EXPECT_EQ(A("pd").padding[1], (ir::PaddingDim{1, 3, 0}));
  EXPECT_EQ(A("pi").padding[0], (ir::PaddingDim{0, 0, 1}));
  EXPECT_EQ(PrintInstruction(I("pi")), "%pi = f32[15,16] pad(%p, %zero), padding=0_0_1x0_0");
  EXPECT_EQ(A("io").iota_dimension, 0);
  EXPECT_EQ(A("ds").slice_sizes, (std::vector<int64_t>{2, 16}));
  EXPECT_EQ(A("gte").tuple_index, 0);
  EXPECT_EQ(A("red").dimensions, (std::vector<int64_t>{1}));
}

TEST_F(AttributesTest, CompareDirectionAndType) {
  EXPECT_EQ(A("cmp").comparison_direction, ir::ComparisonDirection::kLt);
  EXPECT_EQ(A("cmp").comparison_type, ir::ComparisonType::kTotalOrder);
  EXPECT_EQ(Get(*module_, "c").attributes().comparison_type, ir::ComparisonType::kDefault);
  EXPECT_EQ(PrintInstruction(I("cmp")),
            "%cmp = pred[8,16] compare(%p, %p), direction=LT, type=TOTALORDER");
}

TEST_F(AttributesTest, WindowAndConvolution) {
  ASSERT_EQ(A("rw").window.size(), 2u);
  EXPECT_EQ(A("rw").window[0].size, 2);
  EXPECT_EQ(A("rw").window[1].stride, 2);
  const auto& conv = *A("conv").conv_dims;
  EXPECT_EQ(conv.input_batch, 0);
  EXPECT_EQ(conv.input_feature, 3);
  EXPECT_EQ(conv.input_spatial, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(conv.kernel_input_feature, 2);
  EXPECT_EQ(conv.kernel_output_feature, 3);
  EXPECT_EQ(conv.kernel_spatial, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(conv.output_spatial, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(PrintInstruction(I("conv")),
            "%conv = f32[1,6,6,16] convolution(%img, %k), window={size=3x3}, "
            "dim_labels=b01f_01io->b01f");
  ASSERT_EQ(I("sas").called_computations().size(), 2u);
  EXPECT_EQ(I("sas").called_computation(0)->name(), "ge");
  EXPECT_EQ(I("sas").called_computation(1)->name(), "add");
}

TEST_F(AttributesTest, GatherAndScatter) {
  const auto& g = *A("g").gather_dims;
  EXPECT_EQ(g.offset_dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(g.collapsed_slice_dims, (std::vector<int64_t>{0}));
  EXPECT_EQ(g.start_index_map, (std::vector<int64_t>{0}));
  EXPECT_EQ(g.index_vector_dim, 1);
  EXPECT_EQ(A("g").slice_sizes, (std::vector<int64_t>{1, 16}));
  EXPECT_TRUE(A("g").indices_are_sorted);
  const auto& s = *A("sc").scatter_dims;
  EXPECT_EQ(s.update_window_dims, (std::vector<int64_t>{1}));
  EXPECT_EQ(s.scatter_dims_to_operand_dims, (std::vector<int64_t>{0}));
  EXPECT_EQ(s.index_vector_dim, 1);
  EXPECT_TRUE(A("sc").unique_indices);
  EXPECT_EQ(I("sc").to_apply()->name(), "add");
}

TEST_F(AttributesTest, Collectives) {
  const auto& ar = A("ar");
  EXPECT_EQ(ar.channel_id, 3);
  EXPECT_TRUE(ar.use_global_device_ids);
  EXPECT_EQ(ar.replica_groups->groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_FALSE(ar.replica_groups->iota.has_value());
  // [2,4]<=[4,2]T(1,0): arange(8).reshape(4,2).transpose(1,0) = {0,2,4,6},{1,3,5,7}.
  const auto& ag = *A("ag").replica_groups;
  EXPECT_EQ(ag.groups, (std::vector<std::vector<int64_t>>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  ASSERT_TRUE(ag.iota.has_value());
  EXPECT_EQ(ag.iota->transpose_perm, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(PrintInstruction(I("ag")),
            "%ag = f32[64,16] all-gather(%p), dimensions={0}, replica_groups=[2,4]<=[4,2]T(1,0)");
  EXPECT_EQ(A("rs").replica_groups->groups, (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}}));
  EXPECT_TRUE(A("a2a").replica_groups->groups.empty());
  EXPECT_EQ(A("cp").source_target_pairs,
            (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 0}}));
  EXPECT_EQ(PrintInstruction(I("ar")),
            "%ar = f32[8,16] all-reduce(%p), to_apply=%add, replica_groups={{0,1},{2,3}}, "
            "channel_id=3, use_global_device_ids=true");
}

TEST_F(AttributesTest, CustomCallShardingAndOpaque) {
  const auto& cc = A("cc");
  EXPECT_EQ(cc.custom_call_target, "Sharding");
  EXPECT_TRUE(cc.custom_call_has_side_effect);
  EXPECT_EQ(cc.sharding, "{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
  ASSERT_EQ(cc.opaque.size(), 1u);
  EXPECT_EQ(cc.opaque[0].second, "API_VERSION_STATUS_RETURNING");
}

TEST_F(AttributesTest, ScalarsOfOtherOps) {
  EXPECT_DOUBLE_EQ(A("bn").epsilon, 1e-05);
  EXPECT_EQ(A("bn").feature_index, 3);
  EXPECT_EQ(A("rp").exponent_bits, 5);
  EXPECT_EQ(A("rp").mantissa_bits, 10);
  EXPECT_TRUE(A("srt").is_stable);
  EXPECT_EQ(A("rbg").rng_algorithm, "rng_default");
}

TEST_F(AttributesTest, TextAttributesKeptVerbatim) {
  const auto& out = A("out");
  ASSERT_EQ(out.metadata.size(), 3u);
  EXPECT_EQ(out.metadata[1], (std::pair<std::string, std::string>{"op_name", "\"jit(f)/dot\""}));
  EXPECT_EQ(out.metadata[2], (std::pair<std::string, std::string>{"source_line", "114"}));
  EXPECT_EQ(ir::MetadataOpName(out), "jit(f)/dot");
  ASSERT_EQ(out.frontend_attributes.size(), 2u);
  EXPECT_EQ(out.frontend_attributes[0].second, "output0,output1");
  EXPECT_EQ(out.backend_config, R"({"known_trip_count":{"n":"11"}})");
  ASSERT_EQ(I("out").control_predecessors().size(), 2u);
  EXPECT_EQ(I("out").control_predecessors()[1]->name(), "cc");
  EXPECT_EQ(PrintInstruction(I("out")),
            "%out = f32[8,32]{1,0} add(%dot, %dot), "
            "frontend_attributes={neff_output_names=\"output0,output1\",grad_x=\"false\"}, "
            "control-predecessors={%cp, %cc}, metadata={op_type=\"aten__addmm\" "
            "op_name=\"jit(f)/dot\" source_line=114}, "
            "backend_config={\"known_trip_count\":{\"n\":\"11\"}}");
}

TEST(ConditionalTest, BothBranchForms) {
  auto module = ParseOk(R"(
t { a = f32[] parameter(0)
    ROOT n = f32[] negate(a) }
f { a = f32[] parameter(0)
    ROOT n = f32[] abs(a) }
ENTRY main {
  p = pred[] parameter(0)
  i = s32[] parameter(1)
  x = f32[] parameter(2)
  c1 = f32[] conditional(p, x, x), true_computation=t, false_computation=f
  c2 = f32[] conditional(i, x, x, x), branch_computations={f, t, f}
  ROOT c3 = f32[] conditional(p, x, x), branch_computations={t, f}
})");
  ASSERT_NE(module, nullptr);
  const auto& c1 = Get(*module, "c1");
  ASSERT_EQ(c1.called_computations().size(), 2u);
  EXPECT_EQ(c1.called_computation(0)->name(), "t");
  EXPECT_EQ(c1.called_computation(1)->name(), "f");
  ASSERT_EQ(Get(*module, "c2").called_computations().size(), 3u);
  EXPECT_EQ(Get(*module, "c2").called_computation(1)->name(), "t");
  EXPECT_EQ(PrintInstruction(Get(*module, "c2")),
            "%c2 = f32[] conditional(%i, %x, %x, %x), branch_computations={%f, %t, %f}");
  // A pred selector prints in the true/false form whichever form was read.
  EXPECT_EQ(PrintInstruction(Get(*module, "c3")),
            "%c3 = f32[] conditional(%p, %x, %x), true_computation=%t, false_computation=%f");
}

}  // namespace
}  // namespace alpa::hlo
