// libFuzzer target: plan documents (v1 single-stage, v2 pipelined) as `alpa run --plan` reads
// them. The readers take a path, so each input goes through a file; the run identity is the one
// the document names, so that a well-formed document is read past the identity check.
#include <unistd.h>

#include <cstdint>
#include <string>

#include "fuzz/fuzz_check.h"
#include "plan/plan_document.h"
#include "support/file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace alpa;
  static const std::string path = "/tmp/alpa-plan-fuzz-" + std::to_string(getpid()) + ".json";
  if (!WriteStringToFile(path, fuzz::Text(data, size)).ok()) return 0;
  auto document = plan::document::LoadPlanDocument(path);
  if (!document.ok()) return 0;
  plan::document::RunIdentity identity;
  const auto& model = plan::document::Field(*document, "model");
  identity.model = plan::document::Text(model, "name");
  identity.step_fingerprint = identity.loss_fingerprint =
      plan::document::Text(model, "fingerprint");
  identity.cluster = plan::document::Text(*document, "cluster");
  (void)plan::document::ReadSavedPlan(path, identity);
  (void)plan::document::ReadSavedPipelinedStages(path, identity);
  return 0;
}
