// libFuzzer target: cluster JSON files (--cluster FILE). Accepted specs print (ClusterJson) to a
// file that reads back to the same spec.
#include <cstdint>

#include "cluster/cluster_json.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace alpa;
  auto spec = cluster::ParseClusterJson(fuzz::Text(data, size), "fuzz");
  if (!spec.ok()) return 0;
  fuzz::CheckReadsBack(
      "cluster", cluster::ClusterJson(*spec),
      [](const std::string& text) { return cluster::ParseClusterJson(text, "printed"); },
      [](const cluster::ClusterSpec& read) { return cluster::ClusterJson(read); });
  return 0;
}
