// The presets' figures (datasheets, cited in src/cluster/device.cc and presets.cc) and the
// `--cluster` argument.
#include "cluster/presets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

namespace alpa::cluster {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kGiB = int64_t{1} << 30;

ClusterSpec Parse(const std::string& argument) {
  Result<ClusterSpec> spec = ParseClusterArgument(argument);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return spec.ok() ? *spec : ClusterSpec{};
}

std::string ParseError(const std::string& argument) {
  Result<ClusterSpec> spec = ParseClusterArgument(argument);
  EXPECT_FALSE(spec.ok()) << argument << " was accepted";
  return spec.ok() ? "" : spec.status().message();
}

TEST(ClusterPresets, P3HasEightV100PerHostAnd25Gbps) {
  ClusterSpec spec = Parse("p3.16xlarge");
  ASSERT_EQ(spec.hosts.size(), 1u);
  EXPECT_EQ(spec.name, "p3.16xlarge");
  const HostSpec& host = spec.hosts[0];
  EXPECT_EQ(host.devices, 8);
  EXPECT_EQ(host.device.name, "V100-SXM2-16GB");
  EXPECT_EQ(host.device.memory_bytes, 16 * kGiB);
  EXPECT_DOUBLE_EQ(host.device.memory_bandwidth, 900e9);
  EXPECT_DOUBLE_EQ(host.device.PeakFlops("f32"), 15.7e12);
  EXPECT_DOUBLE_EQ(host.device.PeakFlops("f16"), 125e12);
  EXPECT_DOUBLE_EQ(host.device.PeakFlops("bf16"), 0);  // V100 has no bf16 units
  EXPECT_EQ(host.intra_host.topology, Topology::kCubeMesh);
  EXPECT_DOUBLE_EQ(host.intra_host.bandwidth, 150e9);    // 6 NVLinks x 25 GB/s per direction
  EXPECT_DOUBLE_EQ(spec.inter_host.bandwidth, 3.125e9);  // 25 Gbps
  EXPECT_FALSE(spec.racks.has_value());
  EXPECT_EQ(TotalDevices(spec), 8);
}

TEST(ClusterPresets, OtherPresetsFigures) {
  ClusterSpec v100 = Parse("v100-32gb");
  EXPECT_EQ(v100.hosts[0].device.memory_bytes, 32 * kGiB);
  EXPECT_DOUBLE_EQ(v100.hosts[0].intra_host.bandwidth, 150e9);  // 300 GB/s both directions

  ClusterSpec p4d = Parse("p4d.24xlarge");
  EXPECT_EQ(p4d.hosts[0].devices, 8);
  EXPECT_EQ(p4d.hosts[0].device.memory_bytes, 40 * kGiB);
  EXPECT_DOUBLE_EQ(p4d.hosts[0].device.PeakFlops("bf16"), 312e12);
  EXPECT_DOUBLE_EQ(p4d.hosts[0].device.PeakFlops("f32"), 19.5e12);
  EXPECT_DOUBLE_EQ(p4d.hosts[0].device.memory_bandwidth, 1555e9);
  EXPECT_EQ(p4d.hosts[0].intra_host.topology, Topology::kSwitch);
  EXPECT_DOUBLE_EQ(p4d.inter_host.bandwidth, 50e9);  // 400 Gbps

  ClusterSpec h100 = Parse("dgx-h100");
  EXPECT_EQ(h100.hosts[0].device.memory_bytes, 80 * kGiB);
  EXPECT_DOUBLE_EQ(h100.hosts[0].device.PeakFlops("bf16"), 989.5e12);  // dense
  EXPECT_DOUBLE_EQ(h100.hosts[0].device.PeakFlops("f32"), 67e12);
  EXPECT_DOUBLE_EQ(h100.hosts[0].device.memory_bandwidth, 3.35e12);
  EXPECT_DOUBLE_EQ(h100.inter_host.bandwidth, 400e9);  // 8 x 400 Gbps
}

TEST(ClusterPresets, HostsAndDevicesFromTheArgument) {
  ClusterSpec two = Parse("p3.16xlarge:2");
  EXPECT_EQ(two.name, "p3.16xlarge:2");
  EXPECT_EQ(two.hosts.size(), 2u);
  EXPECT_EQ(TotalDevices(two), 16);
  EXPECT_TRUE(IsHomogeneous(two));
  EXPECT_DOUBLE_EQ(AggregatePeakFlops(two, "f32"), 16 * 15.7e12);
  EXPECT_EQ(AggregateMemoryBytes(two), 16 * 16 * kGiB);

  ClusterSpec four = Parse("v100-32gb:1x4");
  ASSERT_EQ(four.hosts.size(), 1u);
  EXPECT_EQ(four.hosts[0].devices, 4);

  ClusterSpec big = Parse("dgx-h100:4x8");
  EXPECT_EQ(TotalDevices(big), 32);
}

TEST(ClusterPresets, AMemoryBudgetReplacesEveryDevicesMemoryAndNothingElse) {
  const ClusterSpec spec = Parse("p3.16xlarge:2");
  const ClusterSpec budgeted = WithDeviceMemory(spec, 12 * kGiB);
  EXPECT_EQ(AggregateMemoryBytes(budgeted), 16 * 12 * kGiB);
  EXPECT_TRUE(ValidateClusterSpec(budgeted).ok());
  ClusterSpec restored = budgeted;
  for (HostSpec& host : restored.hosts) host.device.memory_bytes = 16 * kGiB;
  EXPECT_EQ(restored, spec);  // bandwidths, FLOP/s, links and hosts untouched
}

TEST(ClusterPresets, ALostDeviceLeavesItsHostOneShortOrGone) {
  const ClusterSpec two_hosts = Parse("p3.16xlarge:2x2");
  const ClusterSpec three = WithoutDevice(two_hosts, 3);
  ASSERT_EQ(three.hosts.size(), 2u);
  EXPECT_EQ(three.hosts[0].devices, 2);
  EXPECT_EQ(three.hosts[1].devices, 1);
  EXPECT_TRUE(ValidateClusterSpec(three).ok());
  const ClusterSpec two = WithoutDevice(three, 2);
  ASSERT_EQ(two.hosts.size(), 1u);
  EXPECT_EQ(TotalDevices(two), 2);
  EXPECT_EQ(two.inter_host, two_hosts.inter_host);
}

TEST(ClusterPresets, LocalUsesCpuCoresAndSaysItsFiguresAreEstimates) {
  ClusterSpec local = Parse("local:4");
  ASSERT_EQ(local.hosts.size(), 1u);
  EXPECT_EQ(local.hosts[0].devices, 4);
  EXPECT_EQ(local.hosts[0].device.name, "cpu-core");
  EXPECT_GT(local.hosts[0].device.memory_bytes, 0);
  EXPECT_GT(local.hosts[0].device.PeakFlops("f32"), 0);
  EXPECT_THAT(local.note, HasSubstr("estimated, not profiled"));

  ClusterSpec all = Parse("local");
  const int64_t threads = std::max<int64_t>(1, std::thread::hardware_concurrency());
  EXPECT_EQ(all.hosts[0].devices, threads);

  ClusterSpec processes = Parse("local:2x3");
  EXPECT_EQ(processes.hosts.size(), 2u);
  EXPECT_EQ(TotalDevices(processes), 6);
}

TEST(ClusterPresets, BadArguments) {
  std::string unknown = ParseError("p5.48xlarge");
  EXPECT_THAT(unknown, HasSubstr("unknown cluster preset 'p5.48xlarge'"));
  for (const char* name : {"p3.16xlarge", "v100-32gb", "p4d.24xlarge", "dgx-h100", "local"}) {
    EXPECT_THAT(unknown, HasSubstr(name));
  }
  EXPECT_THAT(ParseError("nope:2"), HasSubstr("unknown cluster preset 'nope'"));
  EXPECT_THAT(ParseError("p3.16xlarge:0"),
              HasSubstr("p3.16xlarge:0: the number of hosts must be at least 1"));
  EXPECT_THAT(ParseError("p3.16xlarge:1x0"), HasSubstr("devices per host must be at least 1"));
  EXPECT_THAT(ParseError("local:0"), HasSubstr("at least 1"));
  EXPECT_THAT(ParseError("p3.16xlarge:1x16"), HasSubstr("has 8 devices; ask for at most 8"));
  for (const char* bad : {"p3.16xlarge:", "p3.16xlarge:two", "p3.16xlarge:2x", "p3.16xlarge:x4",
                          "p3.16xlarge:2x4x1", "p3.16xlarge:-1"}) {
    Result<ClusterSpec> spec = ParseClusterArgument(bad);
    EXPECT_FALSE(spec.ok()) << bad;
    if (!spec.ok()) {
      EXPECT_THAT(spec.status().message(), HasSubstr(bad));
    }
  }
  EXPECT_THAT(ParseError(""), HasSubstr("empty cluster"));
  EXPECT_THAT(ParseError("/nonexistent/cluster.json"), HasSubstr("/nonexistent/cluster.json"));
}

TEST(ClusterPresets, ListsThePresets) {
  EXPECT_EQ(PresetNames(), "p3.16xlarge, v100-32gb, p4d.24xlarge, dgx-h100, local");
  for (const PresetInfo& preset : ClusterPresets()) {
    EXPECT_TRUE(MakePresetCluster(preset.name, 1, std::nullopt).ok()) << preset.name;
  }
}

}  // namespace
}  // namespace alpa::cluster
