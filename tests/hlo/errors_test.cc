// Every class of parse error, with its exact line:column, and the malformed corpus files.
#include <gtest/gtest.h>

#include <filesystem>

#include "hlo/parser.h"
#include "support/file.h"
#include "test_util.h"

namespace alpa::hlo {
namespace {

using testing::FirstErrorLine;

TEST(ErrorsTest, MessageCarriesSourceLineAndCaret) {
  auto module = ParseHloModule("ENTRY e {\n  ROOT a = f32[] frobnicate()\n}\n", "model.hlo");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(module.status().message(),
            "model.hlo:2:18: unknown opcode 'frobnicate' in 'a', expected an XLA HLO opcode "
            "such as add, dot, custom-call\n"
            "  ROOT a = f32[] frobnicate()\n"
            "                 ^");
}

TEST(ErrorsTest, UnknownAttribute) {
  EXPECT_EQ(
      FirstErrorLine("ENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] add(a, a), foo=1\n}"),
      "test.hlo:3:29: unknown attribute 'foo' for opcode 'add'");
  // Known, but not an attribute of this opcode.
  EXPECT_EQ(
      FirstErrorLine(
          "ENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] add(a, a), dimensions={0}\n}"),
      "test.hlo:3:29: unknown attribute 'dimensions' for opcode 'add'");
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] negate(a), "
                           "metadata={}, metadata={}\n}"),
            "test.hlo:3:42: attribute 'metadata' given twice on 'b', expected each "
            "attribute once");
}

TEST(ErrorsTest, MissingRequiredAttribute) {
  EXPECT_EQ(FirstErrorLine(
                "ENTRY e {\n  a = (f32[]) parameter(0)\n  ROOT b = f32[] get-tuple-element(a)\n}"),
            "test.hlo:3:8: 'b' (get-tuple-element) is missing attribute 'index', expected "
            "index=...");
}

TEST(ErrorsTest, BadAttributeValues) {
  const std::string prefix = "ENTRY e {\n  a = f32[4] parameter(0)\n  z = f32[] constant(0)\n";
  EXPECT_EQ(FirstErrorLine(prefix + "  ROOT b = pred[4] compare(a, a), direction=XX\n}"),
            "test.hlo:4:45: unknown direction 'XX', expected EQ, NE, LT, LE, GT or GE");
  EXPECT_EQ(FirstErrorLine(prefix + "  ROOT b = f32[6] pad(a, z), padding=1-1\n}"),
            "test.hlo:4:38: bad padding '1-1', expected low_high[_interior] per dimension "
            "joined by 'x' (e.g. 0_0x1_2_0)");
  EXPECT_EQ(
      FirstErrorLine(
          prefix + "  ROOT b = f32[4] all-gather(a), dimensions={0}, replica_groups=[2,4]<=[3]\n}"),
      "test.hlo:4:65: bad iota replica groups, expected [groups,size]<=[dims] with "
      "positive sizes, groups*size == prod(dims) <= 1048576");
  EXPECT_EQ(FirstErrorLine(prefix + "  ROOT b = f32[4] all-gather(a), dimensions={0}, "
                                    "replica_groups=[1048576,1048576]<=[1048576,1048576]\n}"),
            "test.hlo:4:65: bad iota replica groups, expected [groups,size]<=[dims] with "
            "positive sizes, groups*size == prod(dims) <= 1048576");
  EXPECT_EQ(FirstErrorLine(prefix + "  ROOT b = f32[4] convolution(a, a), dim_labels=bf_io->bx\n}"),
            "test.hlo:4:49: bad dim_labels 'bf_io->bx', expected <input>_<kernel>-><output> "
            "with b/f, i/o and spatial digits 0..n-1 (e.g. b01f_01io->b01f)");
  EXPECT_EQ(FirstErrorLine(prefix + "  ROOT b = f32[4] custom-call(a), custom_call_target=\"x\", "
                                    "backend_config={\"a\": [1}\n}"),
            "test.hlo:4:74: mismatched '}', expected ']' in the value of 'backend_config'");
}

TEST(ErrorsTest, UnknownOpcodeAndMalformedInstruction) {
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  a = f32[] paramter(0)\n}"),
            "test.hlo:2:13: unknown opcode 'paramter' in 'a', expected an XLA HLO opcode "
            "such as add, dot, custom-call");
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  a = parameter(0)\n}"),
            "test.hlo:2:7: found identifier 'parameter', expected the result shape of 'a'");
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] negate(a\n}"),
            "test.hlo:4:1: found '}', expected ',' or ')' after the operands of 'b'");
}

TEST(ErrorsTest, UndefinedOperandAndDuplicateName) {
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] add(a, %c)\n}"),
            "test.hlo:3:25: use of undefined instruction '%c' as operand 1 of 'b' in "
            "computation 'e', expected an instruction of the same computation");
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  a = f32[] parameter(0)\n  a = f32[] negate(a)\n}"),
            "test.hlo:3:3: instruction 'a' is defined twice in computation 'e', expected "
            "unique names within a computation");
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] negate(a), "
                           "control-predecessors={x}\n}"),
            "test.hlo:3:51: use of undefined instruction '%x' as a control predecessor of "
            "'b' in computation 'e', expected an instruction of the same computation");
}

TEST(ErrorsTest, UnresolvedComputationReference) {
  EXPECT_EQ(FirstErrorLine(
                "ENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] call(a), to_apply=%nope\n}"),
            "test.hlo:3:36: computation 'nope' called by 'b' (to_apply) is not defined, "
            "expected the name of a computation in this module");
  EXPECT_EQ(FirstErrorLine("c { ROOT x = f32[] constant(0) }\nENTRY e {\n  p = pred[] "
                           "parameter(0)\n  ROOT b = f32[] conditional(p), true_computation=c\n}"),
            "test.hlo:4:8: conditional 'b' has an invalid set of branches, expected "
            "true_computation and false_computation, or a non-empty branch_computations");
}

TEST(ErrorsTest, WrongOperandCount) {
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] add(a, a, a)\n}"),
            "test.hlo:3:8: 'b' (add) has 3 operands, expected 2");
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  ROOT b = f32[] reduce(), dimensions={}, to_apply=e\n}"),
            "test.hlo:2:8: 'b' (reduce) has 0 operands, expected at least 2");
}

TEST(ErrorsTest, RootsEntriesAndComputations) {
  EXPECT_EQ(
      FirstErrorLine("ENTRY e {\n  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] negate(a)\n}"),
      "test.hlo:3:3: second ROOT in computation 'e' (the first is 'a' at test.hlo:2:3), "
      "expected exactly one ROOT");
  EXPECT_EQ(FirstErrorLine("ENTRY a {\n  ROOT x = f32[] parameter(0)\n}\nENTRY b {\n  ROOT y = "
                           "f32[] parameter(0)\n}"),
            "test.hlo:4:7: second ENTRY computation 'b' (the entry is already 'a' at "
            "test.hlo:1:7), expected exactly one ENTRY");
  EXPECT_EQ(FirstErrorLine("c { ROOT x = f32[] parameter(0) }\nc { ROOT y = f32[] parameter(0) }"),
            "test.hlo:2:1: computation 'c' is defined twice (first at test.hlo:1:1), "
            "expected unique computation names");
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n}"),
            "test.hlo:1:9: computation 'e' has no instructions, expected at least one");
  EXPECT_EQ(FirstErrorLine("HloModule m\n"),
            "test.hlo:2:1: found end of input, expected a computation ('ENTRY %main { ... }')");
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  a = f32[] parameter(0)\n"),
            "test.hlo:3:1: found end of input, expected '}' to close computation 'e' "
            "opened at test.hlo:1:9");
}

TEST(ErrorsTest, LexicalErrors) {
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  a = f32[] parameter(0), metadata={op_name=\"x}\n}"),
            "test.hlo:2:45: found unterminated string '\"', expected a value for metadata key "
            "'op_name'");
  EXPECT_EQ(FirstErrorLine("ENTRY e { /* open"),
            "test.hlo:1:11: found unterminated /* comment '/*', expected an instruction "
            "name or '}'");
  EXPECT_EQ(FirstErrorLine("ENTRY e {\n  a = f32[] parameter(99999999999999999999)\n}"),
            "test.hlo:2:23: integer 99999999999999999999 is out of range, expected the "
            "parameter number");
}

// Binary input is named as such, and no control byte reaches the terminal in the echoed line.
TEST(ErrorsTest, BinaryAndControlBytes) {
  EXPECT_EQ(FirstErrorLine(std::string("HloModule m\n\x08\x01\0\x7f", 16)),
            "test.hlo:2:3: not HLO text (a NUL byte); binary HloProto dumps (.pb) are not read, "
            "pass the text dump (XLA_FLAGS=--xla_dump_hlo_as_text)");
  auto module = ParseHloModule("ENTRY e {\n  p = f32[2] parameter(0)\x1b[2J\n}", "test.hlo");
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().message(),
            "test.hlo:2:26: found unexpected character byte 0x1b, expected an instruction name or "
            "'}'\n  p = f32[2] parameter(0)?[2J\n                         ^");
}

TEST(ErrorsTest, NestingDepthIsCapped) {
  std::string text = "ENTRY e {\n  ROOT a = " + std::string(1000, '(') + " parameter(0)\n}";
  EXPECT_EQ(FirstErrorLine(text), "test.hlo:2:268: shape nested deeper than 256 levels");
  // 300 brackets for a rank-300 shape: the 256th level (at column 626 + 255) is refused.
  std::string dims = "1";
  for (int i = 1; i < 300; ++i) dims += ",1";
  std::string literal = "ENTRY e {\n  ROOT a = f32[" + dims + "] constant(" +
                        std::string(300, '{') + "0" + std::string(300, '}') + ")\n}";
  EXPECT_EQ(FirstErrorLine(literal), "test.hlo:2:881: literal nested deeper than 256 levels");
}

TEST(ErrorsTest, MalformedCorpusFiles) {
  const std::filesystem::path dir = std::filesystem::path(ALPA_TESTDATA_DIR) / "hlo/invalid";
  struct Case {
    const char* file;
    const char* error;
  };
  const Case cases[] = {
      // A GPT-2 block dumped without the reducer computations it calls.
      {"edge_gpt2_entry_only.hlo",
       "edge_gpt2_entry_only.hlo:55:127: computation 'reduce.107.MaxFunc.112' called by "
       "'reduce.107' (to_apply) is not defined, expected the name of a computation in this "
       "module"},
      // A 12-line fragment that stops before the computation's closing brace.
      {"neuronx_llama_fused_qkv_slice.hlo",
       "neuronx_llama_fused_qkv_slice.hlo:13:1: found end of input, expected '}' to close "
       "computation 'FullyUnrolled.180' opened at neuronx_llama_fused_qkv_slice.hlo:1:444"},
  };
  for (const Case& c : cases) {
    auto text = ReadFileToString((dir / c.file).string());
    ASSERT_TRUE(text.ok()) << text.status().message();
    auto module = ParseHloModule(*text, c.file);
    ASSERT_FALSE(module.ok()) << c.file;
    const std::string& message = module.status().message();
    EXPECT_EQ(message.substr(0, message.find('\n')), c.error);
  }
}

TEST(ErrorsTest, SharedInvalidCorpusTwoEntries) {
  const std::filesystem::path file = std::filesystem::path(ALPA_SHARED_DIR) /
                                     "hlo-corpus/invalid/invalid_two_entries_no_header_bert.hlo";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " not present";
  auto text = ReadFileToString(file.string());
  ASSERT_TRUE(text.ok());
  auto module = ParseHloModule(*text, "invalid.hlo");
  ASSERT_FALSE(module.ok());
  const std::string& message = module.status().message();
  // Its first ENTRY line has no body: the next line starts another computation.
  EXPECT_EQ(message.substr(0, message.find('\n')),
            "invalid.hlo:3:22: found '(', expected '=' after 'MaxComputation.1150'");
}

}  // namespace
}  // namespace alpa::hlo
