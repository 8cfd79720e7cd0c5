// Shared helpers of the hlo tests.
#ifndef ALPA_TESTS_HLO_TEST_UTIL_H_
#define ALPA_TESTS_HLO_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "hlo/parser.h"

namespace alpa::hlo::testing {

// Parses or records a test failure (and returns nullptr).
inline std::unique_ptr<ir::Module> ParseOk(std::string_view text) {
  auto module = ParseHloModule(text, "test.hlo");
  if (!module.ok()) {
    ADD_FAILURE() << module.status().message();
    return nullptr;
  }
  return std::move(module).value();
}

// The first line of the parse error ("test.hlo:3:7: ..."), or "parsed" on success.
inline std::string FirstErrorLine(std::string_view text) {
  auto module = ParseHloModule(text, "test.hlo");
  if (module.ok()) return "parsed";
  const std::string& message = module.status().message();
  return message.substr(0, message.find('\n'));
}

// The instruction named `name` in any computation of `module`.
inline const ir::Instruction& Get(const ir::Module& module, std::string_view name) {
  for (const auto& computation : module.computations()) {
    if (const ir::Instruction* instruction = computation->GetInstruction(name)) return *instruction;
  }
  ADD_FAILURE() << "no instruction " << name;
  static const ir::Instruction kMissing("missing", ir::Opcode::kTuple, ir::Shape());
  return kMissing;
}

}  // namespace alpa::hlo::testing

#endif  // ALPA_TESTS_HLO_TEST_UTIL_H_
