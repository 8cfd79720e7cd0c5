// The bad-input contract of `alpa`: every class of user error exits 2, prints nothing on stdout
// (so a script never takes a partial result for a success), and names the place on stderr, as
// file:line:col wherever the input has lines.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/tools/alpa_runner.h"

namespace alpa::tools::testing {
namespace {

using ::testing::HasSubstr;

// Both commands, human and --json, must fail the same way on a bad model.
void ExpectBadModelEverywhere(const std::string& path, const std::string& expected_place) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"inspect", path},
                                             {"inspect", "--json", path},
                                             {"inspect", "--print", path},
                                             {"eval", path},
                                             {"eval", "--json", path}}) {
    SCOPED_TRACE(args[0] + " " + args[1]);
    ExpectBadInput(RunAlpa(args), expected_place);
  }
}

TEST_F(AlpaCliTest, TextThatIsNotHlo) {
  // Read as a header-less "ENTRY"-less computation named 'These', it fails at the second word.
  const std::string path = Write("notes.hlo", "These are my notes,\nnot a model.\n");
  ExpectBadModelEverywhere(path, path + ":1:7:");
}

TEST_F(AlpaCliTest, BinaryFileThatIsNotHlo) {
  const std::string path =
      Write("image.hlo", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfe", 18));
  // The first NUL byte starts line 3 (after "\r\n" and "\x1a\n").
  ExpectBadModelEverywhere(path, path + ":3:1: not HLO text");
}

TEST_F(AlpaCliTest, EmptyFile) {
  const std::string path = Write("empty.hlo", "");
  ExpectBadModelEverywhere(path, path + ":1:1:");
}

TEST_F(AlpaCliTest, TruncatedFile) {
  // Cut before the closing brace: the error is at the end of the input.
  std::string text = kTinyDot;
  text = text.substr(0, text.rfind('}'));
  const std::string path = Write("cut.hlo", text);
  ExpectBadModelEverywhere(path, path + ":7:1:");

  // Cut in the middle of an instruction.
  const std::string mid = Write("mid.hlo", std::string(kTinyDot).substr(0, 100));
  ExpectBadModelEverywhere(mid, mid + ":4:");

  // The vendored corpus fragment that stops before its closing brace.
  const std::string fragment = TestdataPath("hlo/invalid/neuronx_llama_fused_qkv_slice.hlo");
  ExpectBadModelEverywhere(fragment, fragment + ":13:1:");
}

TEST_F(AlpaCliTest, TruncatedGzipFile) {
  const std::filesystem::path gz = dir_ / "tiny.hlo.gz";
  WriteGzipFile(gz, std::string(kTinyDot) + std::string(4000, '\n'));
  std::string bytes = ReadFile(gz);
  const std::string cut = Write("cut.hlo.gz", bytes.substr(0, bytes.size() / 2));
  ExpectBadModelEverywhere(cut, cut);
}

TEST_F(AlpaCliTest, UndefinedComputation) {
  const std::string path = TestdataPath("hlo/invalid/edge_gpt2_entry_only.hlo");
  ExpectBadModelEverywhere(path, path + ":55:127:");
}

TEST_F(AlpaCliTest, UnknownOpcode) {
  std::string text = kTinyDot;
  text.replace(text.find("dot(f32"), 3, "frobnicate");
  const std::string path = Write("opcode.hlo", text);
  ExpectBadModelEverywhere(path, path + ":6:29:");
  EXPECT_THAT(RunAlpa({"inspect", path}).err, HasSubstr("unknown opcode 'frobnicate'"));
}

TEST_F(AlpaCliTest, UnknownAttribute) {
  std::string text = kTinyDot;
  text.replace(text.find("rhs_contracting_dims={0}"), 24, "rhs_contracting_dims={0}, foo=1");
  const std::string path = Write("attribute.hlo", text);
  const RunResult r = RunAlpa({"inspect", path});
  ExpectBadInput(r, path + ":6:");
  EXPECT_THAT(r.err, HasSubstr("unknown attribute 'foo'"));
  ExpectBadModelEverywhere(path, path + ":6:");
}

// A declared shape that does not follow from the operands is caught by the verifier, after
// parsing; the message still points at the instruction's line.
TEST_F(AlpaCliTest, DeclaredShapeMismatch) {
  std::string text = kTinyDot;
  text.replace(text.find("ROOT %dot = f32[2,4]"), 20, "ROOT %dot = f32[2,5]");
  const std::string path = Write("shape.hlo", text);
  const RunResult r = RunAlpa({"inspect", path});
  ExpectBadInput(r, path + ":6:8:");
  EXPECT_THAT(r.err, HasSubstr("%dot"));
  EXPECT_THAT(r.err, HasSubstr("f32[2,5]"));
  EXPECT_THAT(r.err, HasSubstr("f32[2,4]"));
  ExpectBadModelEverywhere(path, path + ":6:8:");

  // Names are unique per computation only: the place is the %r of the computation the verifier
  // names (line 13), not the %r defined first (line 6). Names without '%' are found too.
  const std::string two = Write("two.hlo", R"(HloModule two

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  r = f32[] add(x, y)
  ROOT s = f32[] add(r, y)
}

ENTRY main {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  r = f32[2] reduce(x, z), dimensions={0}, to_apply=add
  ROOT s = f32[] negate(z)
}
)");
  ExpectBadInput(RunAlpa({"inspect", two}), two + ":13:3:");
}

TEST_F(AlpaCliTest, MissingFile) {
  const std::string path = (dir_ / "no_such_model.hlo").string();
  ExpectBadModelEverywhere(path, path);
  ExpectBadModelEverywhere(path + ".gz", path + ".gz");
  ExpectBadModelEverywhere(dir_.string(), dir_.string());  // a directory is not a model either
}

TEST_F(AlpaCliTest, BadCommandLines) {
  const std::string model = Write("tiny.hlo", kTinyDot);
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {},                                 // no command
           {"frobnicate", model},              // unknown command
           {"inspect"},                        // MODEL missing
           {"inspect", "--bogus", model},      // unknown flag
           {"inspect", model, "extra.hlo"},    // one MODEL only
           {"eval", "--seed", "many", model},  // not a number
           {"eval", "--seed", "-1", model},    // seeds are unsigned (not wrapped to 2^64-1)
           {"eval", "--seed=18446744073709551616", model},  // 2^64 does not fit (not saturated)
           {"eval", model, "--inputs"},                     // flag without its value
           {"eval", "--seed", "3", "--inputs", "in.json", model},  // the seed would be ignored
       }) {
    std::string joined;
    for (const std::string& arg : args) joined += arg + " ";
    SCOPED_TRACE(joined);
    ExpectBadInput(RunAlpa(args), "");
  }
  const RunResult r = RunAlpa({"inspect", "--bogus", model});
  EXPECT_THAT(r.err, HasSubstr("--bogus"));
  EXPECT_THAT(r.err, HasSubstr("--help"));
}

// A partitioned (SPMD) module needs several devices; the single-device interpreter says which
// instruction it cannot run instead of printing made-up checksums.
TEST(AlpaCliErrors, EvalOfAnOpTheInterpreterCannotRun) {
  const std::string path = TestdataPath("hlo/xla_test_collective_cse.hlo");
  const RunResult r = RunAlpa({"eval", path});
  ExpectBadInput(r, path);
  EXPECT_THAT(r.err, HasSubstr("all-gather"));
  ExpectBadInput(RunAlpa({"eval", "--json", path}), path);
  // inspect only reads the module, so it succeeds on the same file.
  EXPECT_EQ(RunAlpa({"inspect", path}).exit_code, 0);
}

TEST_F(AlpaCliTest, BadInputsFiles) {
  const std::string model = Write("tiny.hlo", kTinyDot);
  struct Case {
    const char* name;
    const char* contents;
    const char* expected;  // in the message, after the file name
  };
  const Case cases[] = {
      {"not_json.json", "{\"arguments\": [", "not valid JSON"},
      {"no_arguments.json", "{\"args\": []}", "\"arguments\""},
      {"count.json", R"({"arguments": [{"shape": "f32[2,3]", "values": [1,2,3,4,5,6]}]})",
       "1 arguments"},
      {"shape.json",
       R"({"arguments": [{"shape": "f32[3,2]", "values": [1,2,3,4,5,6]},
                         {"shape": "f32[3,4]", "values": [1,2,3,4,5,6,7,8,9,10,11,12]}]})",
       "arguments[0].shape"},
      {"bad_shape.json",
       R"({"arguments": [{"shape": "f33[2,3]", "values": [1,2,3,4,5,6]},
                         {"shape": "f32[3,4]", "values": [1,2,3,4,5,6,7,8,9,10,11,12]}]})",
       "arguments[0].shape"},
      {"values.json",
       R"({"arguments": [{"shape": "f32[2,3]", "values": [1,2,3,4,5,6]},
                         {"shape": "f32[3,4]", "values": [1,2,3]}]})",
       "arguments[1].values"},
      {"value_type.json",
       R"({"arguments": [{"shape": "f32[2,3]", "values": [1,2,"x",4,5,6]},
                         {"shape": "f32[3,4]", "values": [1,2,3,4,5,6,7,8,9,10,11,12]}]})",
       "arguments[0].values[2]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string inputs = Write(c.name, c.contents);
    const RunResult r = RunAlpa({"eval", "--inputs", inputs, model});
    ExpectBadInput(r, inputs);
    EXPECT_THAT(r.err, HasSubstr(c.expected));
    ExpectBadInput(RunAlpa({"eval", "--json", "--inputs", inputs, model}), inputs);
  }
  const std::string missing = (dir_ / "missing.json").string();
  ExpectBadInput(RunAlpa({"eval", "--inputs", missing, model}), missing);
}

// Integer inputs are range-checked like the parser's literals, rather than wrapped on storing.
TEST_F(AlpaCliTest, InputsFileIntegerRanges) {
  const std::string model = Write("ints.hlo", R"(HloModule ints
ENTRY %main (x: s8[2], y: u64[1]) -> (s8[2], u64[1]) {
  %x = s8[2] parameter(0)
  %y = u64[1] parameter(1)
  ROOT %t = (s8[2], u64[1]) tuple(%x, %y)
}
)");
  const std::string edges = Write("edges.json", R"({"arguments": [
    {"shape": "s8[2]", "values": [-128, 127]}, {"shape": "u64[1]", "values": [18446744073709551615]}]})");
  RunResult ok = RunAlpa({"eval", "--json", "--inputs", edges, model});
  ASSERT_EQ(ok.exit_code, 0) << Describe(ok);
  nlohmann::json json = ParseJson(ok);
  ASSERT_TRUE(json.is_object());
  EXPECT_EQ(json["outputs"][0]["sum"].get<double>(), -1.0);
  EXPECT_EQ(json["outputs"][0]["abs_sum"].get<double>(), 255.0);
  EXPECT_EQ(json["outputs"][1]["sum"].get<double>(), 18446744073709551615.0);

  for (const char* values : {"[300, 0]", "[-129, 0]", "[18446744073709551615, 0]"}) {
    SCOPED_TRACE(values);
    const std::string inputs =
        Write("range.json", std::string(R"({"arguments": [{"shape": "s8[2]", "values": )") +
                                values + R"(}, {"shape": "u64[1]", "values": [0]}]})");
    const RunResult r = RunAlpa({"eval", "--inputs", inputs, model});
    ExpectBadInput(r, inputs + ": arguments[0].values[0]: value ");
    EXPECT_THAT(r.err, HasSubstr("out of range for s8"));
  }
}

// A finite JSON number that rounds to infinity in the element type is refused, not computed with.
TEST_F(AlpaCliTest, InputsFileFloatRanges) {
  const std::string model = Write("halves.hlo", R"(HloModule halves
ENTRY %main (x: f16[1]) -> f16[1] {
  ROOT %x = f16[1] parameter(0)
}
)");
  // 65504 is f16's largest finite value; 65520 and above round to infinity.
  const std::string largest =
      Write("largest.json", R"({"arguments": [{"shape": "f16[1]", "values": [65504]}]})");
  const RunResult ok = RunAlpa({"eval", "--json", "--inputs", largest, model});
  ASSERT_EQ(ok.exit_code, 0) << Describe(ok);
  EXPECT_EQ(ParseJson(ok)["outputs"][0]["sum"].get<double>(), 65504.0);
  const std::string too_large =
      Write("too_large.json", R"({"arguments": [{"shape": "f16[1]", "values": [1e5]}]})");
  const RunResult r = RunAlpa({"eval", "--inputs", too_large, model});
  ExpectBadInput(r, too_large + ": arguments[0].values[0]: ");
  EXPECT_THAT(r.err, HasSubstr("out of range for f16"));
}

// ALPA_MAX_CPU_ISA is refused before any command runs when it names no instruction set, or one
// this CPU lacks (named, with the choices it has); a value the CPU runs is taken.
TEST_F(AlpaCliTest, VectorInstructionSetCapsTheCpuCannotHonour) {
  const RunResult bogus = RunProgram("env", {"ALPA_MAX_CPU_ISA=avx1024", ALPA_BINARY, "zoo"});
  ExpectBadInput(
      bogus, "ALPA_MAX_CPU_ISA=avx1024: not an instruction set; set it to one this CPU runs (sse2");

#if defined(__x86_64__)
  const bool has_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
  const bool has_avx512 = false;
#endif
  const RunResult avx512 = RunProgram("env", {"ALPA_MAX_CPU_ISA=avx512", ALPA_BINARY, "zoo"});
  if (has_avx512) {
    EXPECT_EQ(avx512.exit_code, 0) << Describe(avx512);
  } else {
    ExpectBadInput(avx512, "ALPA_MAX_CPU_ISA=avx512: this CPU lacks AVX-512 F, DQ, BW and VL");
  }
  const RunResult sse2 = RunProgram("env", {"ALPA_MAX_CPU_ISA=sse2", ALPA_BINARY, "zoo"});
  EXPECT_EQ(sse2.exit_code, 0) << Describe(sse2);
}

}  // namespace
}  // namespace alpa::tools::testing
