// Inputs found by fuzz/hlo_parser_fuzzer, reduced by hand. Each once crashed or misbehaved.
#include <gtest/gtest.h>

#include "hlo/printer.h"
#include "test_util.h"

namespace alpa::hlo {
namespace {

using testing::FirstErrorLine;

// crash-99de0bb2: an error inside a computation signature read a Status through a reference to
// a destroyed temporary (ALPA_RETURN_IF_ERROR(f().status())); ASan: stack-use-after-scope.
TEST(FuzzRegressionTest, ErrorInsideSignature) {
  EXPECT_EQ(FirstErrorLine("ENTRY %e (p0.1: f32[4096,102->, p1: f32[]) -> f32[] {\n}"),
            "test.hlo:1:29: found '->', expected ',' or ']' in the dimensions");
  EXPECT_EQ(FirstErrorLine("ENTRY %e (: f32[]) -> f32[] {\n}"),
            "test.hlo:1:11: found ':', expected a parameter name");
}

// crash-67923236: `%3calar_rhs` was accepted as a name, then printed bare in the signature, where
// `3calar_rhs` lexes as a number, so print(parse(x)) did not parse. Names start as in XLA.
TEST(FuzzRegressionTest, NameMayNotStartWithADigit) {
  const std::string error = FirstErrorLine(
      "ENTRY %e {\n  %3calar = f32[] parameter(0)\n  ROOT %r = f32[] copy(%3calar)\n}");
  EXPECT_NE(error.find("test.hlo:2:3:"), std::string::npos) << error;
  EXPECT_NE(error.find("'%' must start a name"), std::string::npos) << error;
  EXPECT_EQ(FirstErrorLine("ENTRY %e {\n  ROOT %_scalar.1 = f32[] parameter(0)\n}"), "parsed");
}

// crash-67b40302: a quoted frontend attribute key ("" here) was printed bare, so `,=` did not
// parse again. Keys that are not names are printed quoted.
TEST(FuzzRegressionTest, QuotedFrontendAttributeKeysRoundTrip) {
  const std::string text =
      "ENTRY %e {\n  ROOT %p = f32[] parameter(0), frontend_attributes={\"\"=\"a\", \"x y\"=\"b\", "
      "k.1=\"c\"}\n}\n";
  auto module = ParseHloModule(text, "test.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const std::string printed = PrintModule(**module);
  EXPECT_NE(printed.find(R"(frontend_attributes={""="a","x y"="b",k.1="c"})"), std::string::npos)
      << printed;
  auto reparsed = ParseHloModule(printed, "printed");
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().message();
  EXPECT_EQ(PrintModule(**reparsed), printed);
}

}  // namespace
}  // namespace alpa::hlo
