// Shared helpers of the cost tests: modules come from HLO text, verified like the tools do.
#ifndef ALPA_TESTS_COST_TEST_UTIL_H_
#define ALPA_TESTS_COST_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string_view>

#include "hlo/parser.h"
#include "ir/verifier.h"

namespace alpa::cost::testing {

// Parses and verifies, or records a test failure and returns nullptr.
inline std::unique_ptr<ir::Module> ParseVerified(std::string_view text) {
  auto module = hlo::ParseHloModule(text, "test.hlo");
  if (!module.ok()) {
    ADD_FAILURE() << module.status().message();
    return nullptr;
  }
  if (Status status = ir::VerifyModule(**module); !status.ok()) {
    ADD_FAILURE() << status.message();
    return nullptr;
  }
  return std::move(module).value();
}

}  // namespace alpa::cost::testing

#endif  // ALPA_TESTS_COST_TEST_UTIL_H_
