// The cluster file: round trips, heterogeneous clusters, racks, and errors that name the place.
#include "cluster/cluster_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster/presets.h"

namespace alpa::cluster {
namespace {

using ::testing::HasSubstr;

constexpr char kHeterogeneous[] = R"({
  "name": "two-kinds",
  "device_types": {
    "V100-SXM2-16GB": {"peak_flops": {"f32": 15.7e12, "f16": 125e12},
                       "memory_bytes": 17179869184, "memory_bandwidth": 9e11},
    "A100-SXM4-40GB": {"peak_flops": {"f32": 19.5e12, "bf16": 312e12},
                       "memory_bytes": 42949672960, "memory_bandwidth": 1.555e12}
  },
  "hosts": [
    {"count": 2, "device_type": "V100-SXM2-16GB", "devices": 8,
     "intra_host": {"topology": "cube_mesh", "bandwidth": 1.5e11, "latency": 5e-6}},
    {"device_type": "A100-SXM4-40GB", "devices": 4,
     "intra_host": {"topology": "switch", "bandwidth": 3e11, "latency": 5e-6}}
  ],
  "inter_host": {"bandwidth": 3.125e9, "latency": 2.5e-5},
  "racks": {"hosts_per_rack": 3, "inter_rack": {"bandwidth": 1.25e10, "latency": 5e-5}}
})";

TEST(ClusterJson, ReadsAHeterogeneousClusterWithRacks) {
  Result<ClusterSpec> spec = ParseClusterJson(kHeterogeneous, "c.json");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->name, "two-kinds");
  ASSERT_EQ(spec->hosts.size(), 3u);
  EXPECT_EQ(spec->hosts[0].device.name, "V100-SXM2-16GB");
  EXPECT_EQ(spec->hosts[1], spec->hosts[0]);
  EXPECT_EQ(spec->hosts[2].device.name, "A100-SXM4-40GB");
  EXPECT_EQ(spec->hosts[2].devices, 4);
  EXPECT_EQ(spec->hosts[2].intra_host.topology, Topology::kSwitch);
  EXPECT_EQ(TotalDevices(*spec), 20);
  EXPECT_FALSE(IsHomogeneous(*spec));
  EXPECT_DOUBLE_EQ(AggregatePeakFlops(*spec, "f32"), 16 * 15.7e12 + 4 * 19.5e12);
  ASSERT_TRUE(spec->racks.has_value());
  EXPECT_EQ(spec->racks->hosts_per_rack, 3);
  EXPECT_EQ(HostOfDevices(*spec).back(), 2);
  EXPECT_EQ(FirstDeviceOfHosts(*spec), (std::vector<int64_t>{0, 8, 16}));
}

// Devices fuse kernels unless the file says otherwise; the local CPU cores (our runtime) do not.
TEST(ClusterJson, KernelFusionIsADeviceProperty) {
  Result<ClusterSpec> spec = ParseClusterJson(kHeterogeneous, "c.json");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_TRUE(spec->hosts[0].device.fuses_kernels);
  std::string text = kHeterogeneous;
  const std::string bandwidth = "\"memory_bandwidth\": 9e11";
  text.replace(text.find(bandwidth), bandwidth.size(), bandwidth + ", \"fuses_kernels\": false");
  Result<ClusterSpec> unfused = ParseClusterJson(text, "c.json");
  ASSERT_TRUE(unfused.ok()) << unfused.status().ToString();
  EXPECT_FALSE(unfused->hosts[0].device.fuses_kernels);
  EXPECT_TRUE(unfused->hosts[2].device.fuses_kernels);
  Result<ClusterSpec> local = ParseClusterArgument("local:2");
  ASSERT_TRUE(local.ok());
  EXPECT_FALSE(local->hosts[0].device.fuses_kernels);
  EXPECT_THAT(ClusterJson(*local), HasSubstr("\"fuses_kernels\": false"));
}

// A kernel's launch time is 0 unless the file gives one; the GPU presets and the local cores have
// one (device.cc).
TEST(ClusterJson, KernelLaunchIsADeviceProperty) {
  Result<ClusterSpec> spec = ParseClusterJson(kHeterogeneous, "c.json");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->hosts[0].device.kernel_launch_s, 0);
  std::string text = kHeterogeneous;
  const std::string bandwidth = "\"memory_bandwidth\": 9e11";
  text.replace(text.find(bandwidth), bandwidth.size(), bandwidth + ", \"kernel_launch\": 3e-6");
  Result<ClusterSpec> launched = ParseClusterJson(text, "c.json");
  ASSERT_TRUE(launched.ok()) << launched.status().ToString();
  EXPECT_EQ(launched->hosts[0].device.kernel_launch_s, 3e-6);
  EXPECT_EQ(launched->hosts[2].device.kernel_launch_s, 0);
  for (const char* preset : {"p3.16xlarge", "p4d.24xlarge", "dgx-h100", "local:2"}) {
    Result<ClusterSpec> cluster = ParseClusterArgument(preset);
    ASSERT_TRUE(cluster.ok());
    EXPECT_GT(cluster->hosts[0].device.kernel_launch_s, 0) << preset;
  }
}

TEST(ClusterJson, RoundTrips) {
  for (const char* argument : {"p3.16xlarge:2", "v100-32gb:1x4", "dgx-h100:3", "local:3"}) {
    Result<ClusterSpec> spec = ParseClusterArgument(argument);
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    const std::string text = ClusterJson(*spec);
    Result<ClusterSpec> back = ParseClusterJson(text, "dump.json");
    ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << text;
    EXPECT_EQ(*back, *spec) << text;
    EXPECT_EQ(ClusterJson(*back), text);
  }
  Result<ClusterSpec> hetero = ParseClusterJson(kHeterogeneous, "c.json");
  ASSERT_TRUE(hetero.ok());
  const std::string text = ClusterJson(*hetero);
  EXPECT_THAT(text, HasSubstr("\"count\": 2"));  // identical hosts are grouped
  Result<ClusterSpec> back = ParseClusterJson(text, "dump.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *hetero);
}

// An intra-host link may carry figures of its own for some collectives (what ApplyProfile sets
// from a profile); they round trip, and Link::For gives a kind its own figures or the link's.
TEST(ClusterJson, AnIntraHostLinkCarriesFiguresPerCollective) {
  const std::string from = R"("topology": "switch", "bandwidth": 3e11, "latency": 5e-6)";
  std::string text = kHeterogeneous;
  text.replace(text.find(from), from.size(),
               from + R"(, "collectives": {"all-gather": {"bandwidth": 2e11, "latency": 7e-6}})");
  Result<ClusterSpec> spec = ParseClusterJson(text, "c.json");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  const Link& link = spec->hosts[2].intra_host;
  EXPECT_EQ(link.For("all-gather"), (LinkFigures{2e11, 7e-6}));
  EXPECT_EQ(link.For("all-reduce"), (LinkFigures{3e11, 5e-6}));
  EXPECT_TRUE(spec->hosts[0].intra_host.collectives.empty());
  const std::string dumped = ClusterJson(*spec);
  Result<ClusterSpec> back = ParseClusterJson(dumped, "dump.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *spec);
}

TEST(ClusterJson, TheExampleFileLoads) {
  Result<ClusterSpec> spec =
      LoadClusterFile(std::string(ALPA_TESTDATA_DIR) + "/../examples/clusters/heterogeneous.json");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_FALSE(IsHomogeneous(*spec));
}

// The error parsing `text` as "c.json" gives; a failure (and "") when it parses.
std::string ParseError(const std::string& text) {
  Result<ClusterSpec> spec = ParseClusterJson(text, "c.json");
  EXPECT_FALSE(spec.ok()) << "accepted:\n" << text;
  return spec.ok() ? "" : spec.status().message();
}

// Replaces the first `from` in kHeterogeneous by `to` and returns the parse error.
std::string ErrorAfterEdit(const std::string& from, const std::string& to) {
  std::string text = kHeterogeneous;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return ParseError(text);
}

TEST(ClusterJson, ErrorsNameThePlace) {
  EXPECT_EQ(ErrorAfterEdit("\"devices\": 4", "\"devices\": 0"),
            "c.json: hosts[1].devices: must be at least 1, found 0");
  EXPECT_EQ(ErrorAfterEdit("\"devices\": 4", "\"devices\": 4.5"),
            "c.json: hosts[1].devices: must be an integer, found 4.5");
  EXPECT_EQ(ErrorAfterEdit("\"count\": 2", "\"count\": 0"),
            "c.json: hosts[0].count: must be at least 1, found 0");
  EXPECT_THAT(ErrorAfterEdit("\"topology\": \"switch\"", "\"topology\": \"mesh\""),
              HasSubstr("c.json: hosts[1].intra_host.topology: unknown topology 'mesh'"));
  EXPECT_THAT(ErrorAfterEdit("\"bandwidth\": 3e11", "\"bandwidth\": -1"),
              HasSubstr("c.json: hosts[1].intra_host.bandwidth: must be a positive number"));
  EXPECT_THAT(ErrorAfterEdit("\"device_type\": \"A100-SXM4-40GB\"", "\"device_type\": \"B200\""),
              HasSubstr("c.json: hosts[1].device_type: 'B200' is not one of the device_types"));
  EXPECT_THAT(ErrorAfterEdit("\"memory_bytes\": 42949672960", "\"memory_bytes\": 0"),
              HasSubstr("c.json: device_types.A100-SXM4-40GB.memory_bytes: must be at least 1"));
  EXPECT_THAT(ErrorAfterEdit("\"memory_bandwidth\": 9e11",
                             "\"memory_bandwidth\": 9e11, \"fuses_kernels\": 1"),
              HasSubstr("c.json: device_types.V100-SXM2-16GB.fuses_kernels: must be"));
  EXPECT_THAT(ErrorAfterEdit("\"memory_bandwidth\": 9e11",
                             "\"memory_bandwidth\": 9e11, \"kernel_launch\": -1e-6"),
              HasSubstr("c.json: device_types.V100-SXM2-16GB.kernel_launch: must be a "
                        "non-negative number of seconds, found -1e-06"));
  const std::string link = R"("bandwidth": 3e11, "latency": 5e-6)";
  EXPECT_EQ(ErrorAfterEdit(link, link + R"(, "collectives": {"all-sum": {"bandwidth": 1, )"
                                        R"("latency": 0}})"),
            "c.json: hosts[1].intra_host.collectives: unknown collective 'all-sum'; expected one "
            "of all-reduce, all-gather, reduce-scatter, all-to-all, broadcast, send-recv, "
            "collective-permute");
  EXPECT_THAT(ErrorAfterEdit(link, link + R"(, "collectives": {"all-to-all": {"bandwidth": 0, )"
                                          R"("latency": 0}})"),
              HasSubstr("c.json: hosts[1].intra_host.collectives.all-to-all.bandwidth: must be a "
                        "positive number"));
  EXPECT_THAT(ErrorAfterEdit(link, link + R"(, "collectives": [])"),
              HasSubstr("c.json: hosts[1].intra_host.collectives: must be an object of figures "
                        "by collective, found array"));
  EXPECT_THAT(ErrorAfterEdit("\"latency\": 2.5e-5", "\"latency\": 2.5e-5, \"collectives\": {}"),
              HasSubstr("c.json: inter_host.collectives: unknown key"));
  EXPECT_THAT(ErrorAfterEdit("\"hosts_per_rack\": 3", "\"hosts_per_rack\": 2"),
              HasSubstr("c.json: racks.hosts_per_rack: 2 does not divide the 3 hosts"));
  EXPECT_THAT(ErrorAfterEdit("\"inter_host\"", "\"inter_hosts\""),
              HasSubstr("c.json: inter_hosts: unknown key"));
  EXPECT_THAT(ErrorAfterEdit("\"latency\": 2.5e-5", "\"latency\": \"fast\""),
              HasSubstr("c.json: inter_host.latency: must be a number, found string"));
  EXPECT_EQ(
      ParseError(
          R"({"device_types": {}, "hosts": [], "inter_host": {"bandwidth": 1, "latency": 0}})"),
      "c.json: hosts: must be a non-empty list of hosts, found an empty list");
  EXPECT_THAT(ParseError("{\n  \"hosts\": [,\n}"), HasSubstr("c.json:2:13: malformed JSON: "));
  EXPECT_EQ(ParseError("{}"), "c.json: missing key 'device_types'");
  EXPECT_THAT(ParseError("[1]"), HasSubstr("must be an object"));
}

TEST(ClusterJson, ValidateRejectsAnEmptyCluster) {
  ClusterSpec spec;
  EXPECT_FALSE(ValidateClusterSpec(spec).ok());
}

}  // namespace
}  // namespace alpa::cluster
