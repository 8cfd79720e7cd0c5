#include "cost/collective_cost.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace alpa::cost {
namespace {

// Round numbers used in the hand computations below.
constexpr int64_t kGiB = int64_t{1} << 30;  // B = 1073741824
constexpr double kNvAlpha = 1e-5;           // a0, s
constexpr double kNvBw = 1e11;              // b0, B/s per device per direction
constexpr double kNetAlpha = 5e-5;          // a1, s
constexpr double kNetBw = 3.125e9;          // b1, 25 Gbps per host per direction
// B / b0 = 0.01073741824 s, B / b1 = 0.34359738368 s.

CollectiveGroup OneHost(int64_t devices) { return {{{devices, kNvAlpha, kNvBw}}}; }
CollectiveGroup Hosts(int64_t devices, int64_t hosts) {
  return {{{devices, kNvAlpha, kNvBw}, {hosts, kNetAlpha, kNetBw}}};
}

CollectiveCost Cost(CollectiveKind kind, int64_t bytes, const CollectiveGroup& group) {
  auto cost = EstimateCollective(kind, bytes, group);
  EXPECT_TRUE(cost.ok()) << cost.status().message();
  return cost.ok() ? *cost : CollectiveCost{-1, "error"};
}

void ExpectSeconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 1e-12 * expected + 1e-15);
}

// The cost of `kind` is `seconds` (to 1e-12 relative) by `algorithm`.
void ExpectCost(CollectiveKind kind, int64_t bytes, const CollectiveGroup& group, double seconds,
                std::string_view algorithm) {
  SCOPED_TRACE(CollectiveKindName(kind));
  CollectiveCost cost = Cost(kind, bytes, group);
  ExpectSeconds(cost.seconds, seconds);
  EXPECT_EQ(cost.algorithm, algorithm);
}

TEST(CollectiveCostTest, AllReduceOneHostLargeIsRing) {
  // ring: 2*7*1e-5 + 2*7/8 * 0.01073741824 = 1.4e-4 + 0.01879048192 = 0.01893048192
  // tree: 2*3*1e-5 + 2 * 0.01073741824     = 6e-5 + 0.02147483648   = 0.02153483648
  ExpectCost(CollectiveKind::kAllReduce, kGiB, OneHost(8), 0.01893048192, "ring");
}

TEST(CollectiveCostTest, AllReduceOneHostSmallIsTree) {
  // B = 1 KiB, B/b0 = 1.024e-8. ring: 1.4e-4 + 1.75 * 1.024e-8 = 1.4017920e-4
  //                              tree: 6e-5 + 2 * 1.024e-8     = 6.002048e-5
  ExpectCost(CollectiveKind::kAllReduce, 1024, OneHost(8), 6.002048e-5, "tree");
}

TEST(CollectiveCostTest, AllGatherAndReduceScatterOneHost) {
  // 7*1e-5 + 7/8 * 0.01073741824 = 7e-5 + 0.00939524096
  for (CollectiveKind kind : {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    ExpectCost(kind, kGiB, OneHost(8), 0.00946524096, "ring");
  }
}

TEST(CollectiveCostTest, AllToAllOneHost) {
  // 7 * (1e-5 + B / (8 * 1e11)) = 7 * (1e-5 + 0.00134217728) = 0.00946524096
  ExpectCost(CollectiveKind::kAllToAll, kGiB, OneHost(8), 0.00946524096, "pairwise exchange");
}

TEST(CollectiveCostTest, BroadcastOneHost) {
  // 7 * 1e-5 + 0.01073741824
  ExpectCost(CollectiveKind::kBroadcast, kGiB, OneHost(8), 0.01080741824, "pipelined ring");
}

TEST(CollectiveCostTest, PointToPointOneHost) {
  // 1e-5 + 0.01073741824, for send/recv and for collective-permute alike.
  for (CollectiveKind kind : {CollectiveKind::kSendRecv, CollectiveKind::kCollectivePermute}) {
    ExpectCost(kind, kGiB, OneHost(8), 0.01074741824, "point-to-point");
  }
}

TEST(CollectiveCostTest, AllReduceAcrossHostsIsHierarchical) {
  // 2 hosts x 8, B = 1 GiB.
  // ring: latency 2*(7*2*1e-5 + 1*5e-5) = 3.8e-4; 2*15/16 * 0.34359738368 = 0.6442450944
  //       -> 0.6446250944
  // tree: 2*(3*1e-5 + 1*5e-5) + 2*0.34359738368 = 0.68735476736
  // hierarchical: inner 2*(7e-5 + 0.00939524096) = 0.01893048192
  //               top (n = 2) ring 2*(5e-5 + 1/2*0.34359738368) = 0.34369738368 (tree: 0.687...)
  //               -> 0.3626278656
  ExpectCost(CollectiveKind::kAllReduce, kGiB, Hosts(8, 2), 0.3626278656, "hierarchical ring");
}

TEST(CollectiveCostTest, AllReduceOverEquallyFastLevelsIsFlatRing) {
  // 2 x 8 where the outer level is as fast as NVLink (a1 = a0, b1 = b0), B = 1 GiB:
  // ring 2*(14e-5 + 1e-5) + 1.875*0.01073741824 = 0.0204326592
  // tree 2*(3e-5 + 1e-5) + 2*0.01073741824 = 0.02155483648
  // hierarchical 0.01893048192 + 2*(1e-5 + 0.00536870912) = 0.02968790016
  CollectiveGroup group{{{8, kNvAlpha, kNvBw}, {2, kNvAlpha, kNvBw}}};
  ExpectCost(CollectiveKind::kAllReduce, kGiB, group, 0.0204326592, "ring");
}

TEST(CollectiveCostTest, SmallAllReduceAcrossManyHostsUsesTree) {
  // 8 x 16 hosts, B = 1 KiB (B/b1 = 3.2768e-7):
  // ring: 2*(7*16*1e-5 + 15*5e-5) + 2*127/128*3.2768e-7 = 3.74e-3 + 6.5024e-7
  // tree: 2*(3*1e-5 + 4*5e-5) + 2*3.2768e-7 = 4.6e-4 + 6.5536e-7 = 4.6065536e-4
  // hierarchical: inner 2*(7e-5 + 7/8*1.024e-8) = 1.4001792e-4; top tree
  //   2*4*5e-5 + 2*3.2768e-7 = 4.0065536e-4 -> 5.4067328e-4
  ExpectCost(CollectiveKind::kAllReduce, 1024, Hosts(8, 16), 4.6065536e-4, "tree");
}

TEST(CollectiveCostTest, OtherCollectivesAcrossHosts) {
  // 2 hosts x 8, B = 1 GiB, B/b1 = 0.34359738368.
  // all-gather: ring latency 7*2*1e-5 + 5e-5 = 1.9e-4; 15/16 * B/b1 = 0.3221225472
  ExpectSeconds(Cost(CollectiveKind::kAllGather, kGiB, Hosts(8, 2)).seconds, 0.3223125472);
  ExpectSeconds(Cost(CollectiveKind::kReduceScatter, kGiB, Hosts(8, 2)).seconds, 0.3223125472);
  // all-to-all: level 0: 7*1*(1e-5 + B/(16*1e11)) = 7e-5 + 0.00469762048
  //             level 1: 1*8*(5e-5 + 8*B/(16*3.125e9)) = 4e-4 + 1.37438953472
  ExpectSeconds(Cost(CollectiveKind::kAllToAll, kGiB, Hosts(8, 2)).seconds, 1.3795571552);
  // broadcast: 1.9e-4 + B/b1
  ExpectSeconds(Cost(CollectiveKind::kBroadcast, kGiB, Hosts(8, 2)).seconds, 0.34378738368);
  // send/recv: 5e-5 + B/b1; collective-permute: 5e-5 + 8*B/b1 (8 devices share the NIC)
  ExpectSeconds(Cost(CollectiveKind::kSendRecv, kGiB, Hosts(8, 2)).seconds, 0.34364738368);
  ExpectSeconds(Cost(CollectiveKind::kCollectivePermute, kGiB, Hosts(8, 2)).seconds, 2.74882906944);
}

TEST(CollectiveCostTest, ThreeLevelsRingLatencyCountsHopsPerLevel) {
  // 2 devices x 2 hosts x 2 racks, all bandwidths 1e11, B = 8 bytes.
  // all-gather ring hops: level 0: 1*4 = 4 (a = 1e-6), level 1: 1*2 = 2 (a = 1e-5),
  // level 2: 1 (a = 1e-4): 4e-6 + 2e-5 + 1e-4 = 1.24e-4; plus 7/8 * 8 / 1e11 = 7e-11.
  CollectiveGroup group{{{2, 1e-6, 1e11}, {2, 1e-5, 1e11}, {2, 1e-4, 1e11}}};
  ExpectSeconds(Cost(CollectiveKind::kAllGather, 8, group).seconds, 1.24e-4 + 7e-11);
}

TEST(CollectiveCostTest, SizeOneLevelsAreIgnored) {
  CollectiveGroup padded{{{1, 1.0, 1.0}, {8, kNvAlpha, kNvBw}, {1, 2.0, 1.0}}};
  for (CollectiveKind kind : kCollectiveKinds) {
    CollectiveCost a = Cost(kind, kGiB, padded);
    CollectiveCost b = Cost(kind, kGiB, OneHost(8));
    EXPECT_EQ(a.seconds, b.seconds) << CollectiveKindName(kind);
    EXPECT_EQ(a.algorithm, b.algorithm) << CollectiveKindName(kind);
  }
}

TEST(CollectiveCostTest, OneParticipantOrNoBytesCostsNothing) {
  for (CollectiveKind kind : kCollectiveKinds) {
    for (const CollectiveGroup& group : {OneHost(1), CollectiveGroup{}, Hosts(1, 1)}) {
      CollectiveCost cost = Cost(kind, kGiB, group);
      EXPECT_EQ(cost.seconds, 0) << CollectiveKindName(kind);
      EXPECT_EQ(cost.algorithm, "none");
    }
    EXPECT_EQ(Cost(kind, 0, Hosts(8, 2)).seconds, 0) << CollectiveKindName(kind);
  }
}

// A cluster file names a link's per-collective figures by cluster::kCollectiveNames, which the
// cost model reads by kind: the two lists must be the same names in the same order.
TEST(CollectiveCostTest, TheClusterLayerNamesEveryKindAsTheCostModelDoes) {
  ASSERT_EQ(cluster::kCollectiveNames.size(), kCollectiveKinds.size());
  for (size_t i = 0; i < kCollectiveKinds.size(); ++i) {
    EXPECT_EQ(cluster::kCollectiveNames[i], CollectiveKindName(kCollectiveKinds[i]));
    EXPECT_EQ(static_cast<size_t>(kCollectiveKinds[i]), i);
  }
}

// A level's figures for one kind (a profiled link's) price that kind alone: all-gather over 8
// devices on alpha 2e-5, b 5e10 is 7 * 2e-5 + 7/8 * B / 5e10 = 0.0189285...; the others keep
// the level's own figures.
TEST(CollectiveCostTest, ALevelsFiguresForOneKindPriceThatKindAlone) {
  CollectiveGroup group = OneHost(8);
  group.levels[0].measured[static_cast<size_t>(CollectiveKind::kAllGather)] =
      cluster::LinkFigures{.bandwidth = 5e10, .latency = 2e-5};
  ExpectCost(CollectiveKind::kAllGather, kGiB, group, 7 * 2e-5 + 7.0 / 8 * kGiB / 5e10, "ring");
  ExpectCost(CollectiveKind::kReduceScatter, kGiB, group, 0.00946524096, "ring");
  ExpectCost(CollectiveKind::kAllReduce, kGiB, group, 0.01893048192, "ring");
}

TEST(CollectiveCostTest, BadInputsAreErrorsNamingTheField) {
  auto negative = AllReduceCost(-1, OneHost(8));
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(negative.status().message().find("bytes"), std::string::npos);

  struct Case {
    LinkLevel level;
    const char* field;
  };
  for (const Case& c :
       {Case{{0, 1e-5, 1e11}, "levels[1].size"}, Case{{-2, 1e-5, 1e11}, "levels[1].size"},
        Case{{2, -1e-5, 1e11}, "levels[1].latency_s"},
        Case{{2, 1e-5, 0}, "levels[1].bandwidth_bytes_per_s"},
        Case{{2, 1e-5, -1}, "levels[1].bandwidth_bytes_per_s"}}) {
    CollectiveGroup group{{{8, kNvAlpha, kNvBw}, c.level}};
    for (CollectiveKind kind : kCollectiveKinds) {
      auto cost = EstimateCollective(kind, 1024, group);
      ASSERT_FALSE(cost.ok()) << c.field;
      EXPECT_NE(cost.status().message().find(c.field), std::string::npos)
          << cost.status().message();
    }
  }
  // A kind's own figures are checked as the level's are, and named as its.
  CollectiveGroup group = OneHost(8);
  group.levels[0].measured[static_cast<size_t>(CollectiveKind::kAllToAll)] =
      cluster::LinkFigures{.bandwidth = 0, .latency = 1e-6};
  auto cost = EstimateCollective(CollectiveKind::kAllToAll, 1024, group);
  ASSERT_FALSE(cost.ok());
  EXPECT_NE(cost.status().message().find("levels[0].measured[all-to-all].bandwidth_bytes_per_s"),
            std::string::npos)
      << cost.status().message();
  EXPECT_TRUE(EstimateCollective(CollectiveKind::kAllGather, 1024, group).ok());
}

std::vector<int64_t> ByteSweep() {
  std::vector<int64_t> sweep = {0, 1, 3, 100, 1000};
  for (int64_t b = 1024; b <= (int64_t{1} << 36); b *= 4) sweep.push_back(b + 7);
  return sweep;
}

TEST(CollectiveCostPropertyTest, MonotoneInBytes) {
  const std::vector<CollectiveGroup> groups = {
      OneHost(2),
      OneHost(8),
      OneHost(6),
      Hosts(8, 2),
      Hosts(4, 3),
      Hosts(8, 16),
      CollectiveGroup{{{4, 1e-6, 2e11}, {4, 1e-5, 5e10}, {3, 1e-4, 1e10}}}};
  for (CollectiveKind kind : kCollectiveKinds) {
    for (const CollectiveGroup& group : groups) {
      double previous = 0;
      for (int64_t bytes : ByteSweep()) {
        double seconds = Cost(kind, bytes, group).seconds;
        EXPECT_GE(seconds, previous) << CollectiveKindName(kind) << " at " << bytes << " bytes";
        previous = seconds;
      }
    }
  }
}

TEST(CollectiveCostPropertyTest, CrossingHostsNeverCheaperThanOneHost) {
  // n0 devices per host x n1 hosts against the same n0*n1 devices inside one host (NVLink), and
  // against the same two-level hierarchy whose outer link is as fast as NVLink. The outer link
  // is never faster than NVLink: latency a0 or more, bandwidth per host b0 or less.
  int checked = 0;
  for (int64_t n0 : {2, 3, 4, 8}) {
    for (int64_t n1 : {2, 3, 4, 16}) {
      for (double alpha : {kNvAlpha, 2 * kNvAlpha, kNetAlpha}) {
        for (double bw : {kNvBw, kNvBw / 4, kNetBw}) {
          CollectiveGroup crossing{{{n0, kNvAlpha, kNvBw}, {n1, alpha, bw}}};
          CollectiveGroup fast_outer{{{n0, kNvAlpha, kNvBw}, {n1, kNvAlpha, kNvBw}}};
          for (CollectiveKind kind : kCollectiveKinds) {
            for (int64_t bytes : ByteSweep()) {
              double across = Cost(kind, bytes, crossing).seconds;
              double inside = Cost(kind, bytes, OneHost(n0 * n1)).seconds;
              double fast = Cost(kind, bytes, fast_outer).seconds;
              EXPECT_GE(across, inside * (1 - 1e-12))
                  << CollectiveKindName(kind) << " " << n0 << "x" << n1 << " alpha " << alpha
                  << " bw " << bw << " bytes " << bytes;
              EXPECT_GE(across, fast * (1 - 1e-12))
                  << CollectiveKindName(kind) << " " << n0 << "x" << n1 << " alpha " << alpha
                  << " bw " << bw << " bytes " << bytes;
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 10000);
}

TEST(CollectiveCostPropertyTest, EveryKindHasAName) {
  for (CollectiveKind kind : kCollectiveKinds) EXPECT_NE(CollectiveKindName(kind), "unknown");
}

TEST(AlpaMeshDimCostTest, MatchesAlpaFormulas) {
  // n = 4, alpha = 1, beta = 0.1, B = 1200:
  //   all-gather      round(1 + 0.1*3/4*1200)  + 0.1      = 91 + 0.1
  //   all-reduce      round(1 + 0.1*2*3/4*1200) + 0.01    = 181 + 0.01
  //   reduce-scatter  round(1 + 90) + 0.001               = 91.001
  //   all-to-all      round(1 + 0.1*3/4/4*1200*2) + 0.001 = 46 + 0.001
  auto cost = [](CollectiveKind kind) {
    auto result = AlpaMeshDimCost(kind, 1200, 4, 1, 0.1);
    EXPECT_TRUE(result.ok()) << result.status().message();
    return result.ok() ? *result : -1.0;
  };
  EXPECT_DOUBLE_EQ(cost(CollectiveKind::kAllGather), 91.1);
  EXPECT_DOUBLE_EQ(cost(CollectiveKind::kAllReduce), 181.01);
  EXPECT_DOUBLE_EQ(cost(CollectiveKind::kReduceScatter), 91.001);
  EXPECT_DOUBLE_EQ(cost(CollectiveKind::kAllToAll), 46.001);
  EXPECT_FALSE(AlpaMeshDimCost(CollectiveKind::kBroadcast, 1000, 4, 1, 0.1).ok());
  EXPECT_FALSE(AlpaMeshDimCost(CollectiveKind::kAllReduce, 1000, 0, 1, 0.1).ok());
}

}  // namespace
}  // namespace alpa::cost
