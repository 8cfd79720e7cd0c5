// Modules and computations: header, entry choice, signatures, names, called computations, and the
// printer's layout of a whole module.
#include <gtest/gtest.h>

#include "hlo/printer.h"
#include "test_util.h"

namespace alpa::hlo {
namespace {

using testing::Get;
using testing::ParseOk;

// The example module of shared/reference/hlo-text-and-sharding.md.
constexpr std::string_view kReferenceExample =
    R"(HloModule mlp, entry_computation_layout={(f32[8,16]{1,0}, f32[16,32]{1,0})->f32[8,32]{1,0}}

%add.f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (x: f32[8,16], w: f32[16,32]) -> f32[8,32] {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  %w = f32[16,32]{1,0} parameter(1), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  %y = f32[8,32]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot"}
  %zero = f32[] constant(0)
  %r = f32[8]{0} reduce(%y, %zero), dimensions={1}, to_apply=%add.f32
  %b = f32[8,32]{1,0} broadcast(%r), dimensions={0}
  %t = (f32[8,32]{1,0}, f32[8]{0}) tuple(%y, %r)
  %g = f32[8,32]{1,0} get-tuple-element(%t), index=0
  ROOT %out = f32[8,32]{1,0} add(%g, %b)
}
)";

TEST(ModuleTest, ReferenceExample) {
  auto module = ParseOk(kReferenceExample);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->name(), "mlp");
  ASSERT_EQ(module->computations().size(), 2u);
  const ir::Computation& entry = *module->entry();
  EXPECT_EQ(entry.name(), "main");
  EXPECT_EQ(entry.root()->name(), "out");
  EXPECT_EQ(entry.parameter_count(), 2);
  const auto& layout = *module->config().entry_computation_layout;
  ASSERT_EQ(layout.parameters.size(), 2u);
  EXPECT_EQ(layout.result.ToString(), "f32[8,32]{1,0}");
  // Names are scoped per computation: %b is a parameter in add.f32 and a broadcast in main.
  EXPECT_EQ(module->computations()[0]->GetInstruction("b")->opcode(), ir::Opcode::kParameter);
  EXPECT_EQ(entry.GetInstruction("b")->opcode(), ir::Opcode::kBroadcast);
  const ir::Instruction& r = Get(*module, "r");
  EXPECT_EQ(r.to_apply()->name(), "add.f32");
  EXPECT_EQ(r.operand(1)->name(), "zero");

  const std::string expected =
      R"(HloModule mlp, entry_computation_layout={(f32[8,16]{1,0}, f32[16,32]{1,0})->f32[8,32]{1,0}}

%add.f32 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[8,16], w: f32[16,32]) -> f32[8,32] {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
  %w = f32[16,32]{1,0} parameter(1), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  %y = f32[8,32]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot"}
  %zero = f32[] constant(0)
  %r = f32[8]{0} reduce(%y, %zero), dimensions={1}, to_apply=%add.f32
  %b = f32[8,32]{1,0} broadcast(%r), dimensions={0}
  %t = (f32[8,32]{1,0}, f32[8]{0}) tuple(%y, %r)
  %g = f32[8,32]{1,0} get-tuple-element(%t), index=0
  ROOT %out = f32[8,32]{1,0} add(%g, %b)
}
)";
  EXPECT_EQ(PrintModule(*module), expected);
}

TEST(ModuleTest, HeaderAttributes) {
  auto module = ParseOk(
      R"(HloModule m, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias) }, num_partitions=4, replica_count=2, frontend_attributes={fingerprint_before_lhs="ab"}
ENTRY e { ROOT p = f32[] parameter(0) })");
  ASSERT_NE(module, nullptr);
  const ir::ModuleConfig& config = module->config();
  EXPECT_TRUE(config.is_scheduled);
  EXPECT_EQ(config.num_partitions, 4);
  EXPECT_EQ(config.replica_count, 2);
  ASSERT_EQ(config.opaque.size(), 2u);
  EXPECT_EQ(config.opaque[0].first, "input_output_alias");
  EXPECT_EQ(config.opaque[0].second, "{ {0}: (0, {}, may-alias) }");
  EXPECT_EQ(config.opaque[1].second, "{fingerprint_before_lhs=\"ab\"}");
  EXPECT_EQ(PrintModule(*module).substr(0, PrintModule(*module).find('\n')),
            "HloModule m, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias) }, "
            "frontend_attributes={fingerprint_before_lhs=\"ab\"}, replica_count=2, "
            "num_partitions=4");
}

TEST(ModuleTest, NoHeaderNoEntryMarkerTakesLastComputation) {
  auto module = ParseOk(R"(
first {
  ROOT a = f32[] parameter(0)
}
second {
  b = f32[] parameter(0)
  ROOT c = f32[] call(b), to_apply=first
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry()->name(), "second");
  EXPECT_EQ(module->name(), "second");
}

TEST(ModuleTest, RootIsLastInstructionWhenUnmarked) {
  auto module = ParseOk("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] negate(a)\n}");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry()->root()->name(), "b");
}

TEST(ModuleTest, CalleesMayComeAfterCallersAndOrderFollowsRoles) {
  auto module = ParseOk(R"(HloModule w
ENTRY main {
  init = (s32[], f32[]) parameter(0)
  ROOT loop = (s32[], f32[]) while(init), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"11"}}
}
%body (s: (s32[], f32[])) -> (s32[], f32[]) {
  ROOT s = (s32[], f32[]) parameter(0)
}
%cond (s: (s32[], f32[])) -> pred[] {
  s = (s32[], f32[]) parameter(0)
  ROOT t = pred[] constant(true)
}
%unused { ROOT u = f32[] constant(1) }
)");
  ASSERT_NE(module, nullptr);
  const ir::Instruction& loop = Get(*module, "loop");
  EXPECT_EQ(loop.while_condition()->name(), "cond");
  EXPECT_EQ(loop.while_body()->name(), "body");
  // Callees first in call order (condition, then body), unreachable ones just before the entry.
  const std::string printed = PrintModule(*module);
  const size_t cond = printed.find("%cond (");
  const size_t body = printed.find("%body (");
  const size_t unused = printed.find("%unused (");
  const size_t entry = printed.find("ENTRY %main (");
  EXPECT_LT(cond, body);
  EXPECT_LT(body, unused);
  EXPECT_LT(unused, entry);
  EXPECT_NE(printed.find("%unused () -> f32[] {\n  ROOT %u = f32[] constant(1)\n}\n"),
            std::string::npos);
}

TEST(ModuleTest, SignaturesOptionalEmptyOrDisagreeing) {
  auto module = ParseOk(R"(
%task_f () -> (f32[4,4]) {
  ROOT c = f32[4,4] constant({...})
}
ENTRY main () -> f32[6] {
  a = f32[6] parameter(1)
  b = f32[6] parameter(0)
  c = f32[4,4] call(), to_apply=%task_f, frontend_attributes={color="task_f"}
  ROOT s = f32[6] add(a, b)
}, execution_thread="main")");
  ASSERT_NE(module, nullptr);
  const ir::Computation& entry = *module->entry();
  ASSERT_EQ(entry.parameter_count(), 2);
  EXPECT_EQ(entry.parameters()[0]->name(), "b");
  EXPECT_EQ(entry.execution_thread(), "main");
  const std::string printed = PrintModule(*module);
  EXPECT_NE(printed.find("ENTRY %main (b: f32[6], a: f32[6]) -> f32[6] {"), std::string::npos);
  EXPECT_NE(printed.find("}, execution_thread=\"main\"\n"), std::string::npos);
}

TEST(ModuleTest, TrailingStackFrameTablesAreSkipped) {
  auto module = ParseOk(R"(HloModule m
ENTRY e {
  ROOT p = f32[] parameter(0), metadata={op_name="x" stack_frame_id=1}
}

FileNames
1 "a.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=2}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->computations().size(), 1u);
}

TEST(ModuleTest, TypedOperandsCommentsAndBlankLines) {
  auto module = ParseOk(R"(
    HloModule indented
    // CHECK: whatever
    ENTRY %e {
      %p = (f32[], f32[]) parameter(0)

      %a = f32[] get-tuple-element((f32[],f32[]) %p), index=0 // trailing comment
      %b = f32[] get-tuple-element(/*typed*/ (f32[], f32[]) %p), index=1
      ROOT %t = (f32[], /*index=1*/f32[]) tuple(f32[] %a, /*index=1*/f32[] %b)
    })");
  ASSERT_NE(module, nullptr);
  const ir::Instruction& t = Get(*module, "t");
  ASSERT_EQ(t.operand_count(), 2);
  EXPECT_EQ(t.operand(1)->name(), "b");
}

TEST(ModuleTest, OpcodeAliasAndEmptyOperandLists) {
  auto module = ParseOk(R"(ENTRY e {
  a = f32[2] parameter(0)
  pid = u32[] partition-id()
  t = () tuple()
  ROOT o = (f32[2]) optimization-barrier(a)
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(Get(*module, "o").opcode(), ir::Opcode::kOptimizationBarrier);
  EXPECT_EQ(Get(*module, "t").operand_count(), 0);
  EXPECT_EQ(PrintInstruction(Get(*module, "o")), "%o = (f32[2]) opt-barrier(%a)");
}

// Each instruction records where its name stands (after ROOT), for diagnostics after parsing.
TEST(ModuleTest, InstructionsRecordTheirSourceLocation) {
  auto module = ParseOk(
      "HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] negate(p)\n}\n");
  EXPECT_EQ(module->source_file(), "test.hlo");
  EXPECT_EQ(Get(*module, "p").location().line, 4);
  EXPECT_EQ(Get(*module, "p").location().column, 3);
  EXPECT_EQ(Get(*module, "r").location().line, 5);
  EXPECT_EQ(Get(*module, "r").location().column, 8);
}

}  // namespace
}  // namespace alpa::hlo
