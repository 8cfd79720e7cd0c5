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
            "test.hlo:1:29: error: found '->', expected ',' or ']' in the dimensions");
  EXPECT_EQ(FirstErrorLine("ENTRY %e (: f32[]) -> f32[] {\n}"),
            "test.hlo:1:11: error: found ':', expected a parameter name");
}

}  // namespace
}  // namespace alpa::hlo
