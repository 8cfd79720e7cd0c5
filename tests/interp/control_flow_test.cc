// while, conditional, call, tuples, rng, single-participant collectives, custom-call and
// batch-norm: expected values are worked out by hand from XLA's operation semantics.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "test_util.h"

namespace alpa::interp::testing {
namespace {

using ir::DType;

// Expects `result` to be an error whose message contains every one of `parts`.
void ExpectErrorMentions(const Result<ir::Literal>& result, std::vector<std::string> parts) {
  ASSERT_FALSE(result.ok());
  for (const std::string& part : parts) {
    EXPECT_NE(result.status().message().find(part), std::string::npos)
        << "missing '" << part << "' in: " << result.status().message();
  }
}

// A module `prefix` + an entry `p = <param> parameter(0)`, `ROOT <root>`.
std::string OneOp(const std::string& param, const std::string& root,
                  const std::string& prefix = "HloModule m\n") {
  return prefix + "ENTRY e {\n  p = " + param + " parameter(0)\n  ROOT " + root + "\n}\n";
}

// ---------------------------------------------------------------------------------------------
// while

// (i, acc) -> (i + 1, acc + i) while i < 5.
constexpr const char* kLoopComputations = R"(
HloModule m
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  sum = s32[] add(acc, i)
  ROOT t = (s32[], s32[]) tuple(next, sum)
}
)";
const std::string kCountingLoop = std::string(kLoopComputations) + R"(
ENTRY e {
  i0 = s32[] parameter(0)
  a0 = s32[] parameter(1)
  init = (s32[], s32[]) tuple(i0, a0)
  ROOT w = (s32[], s32[]) while(init), condition=cond, body=body
})";

TEST(WhileTest, CountingLoopCarriesCounterAndAccumulator) {
  // From (0, 0): five iterations, acc = 0 + 1 + 2 + 3 + 4 = 10, i stops at 5.
  ir::Literal r =
      MustRunHlo(kCountingLoop, {Ints(DType::kS32, {}, {0}), Ints(DType::kS32, {}, {0})});
  ASSERT_TRUE(r.shape().IsTuple());
  EXPECT_EQ(AsInts(r.tuple_element(0)), (std::vector<int64_t>{5}));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{10}));
}

TEST(WhileTest, FalseConditionRunsZeroTimes) {
  // i = 7 fails 7 < 5 at once: the initial state comes back unchanged.
  ir::Literal r =
      MustRunHlo(kCountingLoop, {Ints(DType::kS32, {}, {7}), Ints(DType::kS32, {}, {-3})});
  EXPECT_EQ(AsInts(r.tuple_element(0)), (std::vector<int64_t>{7}));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{-3}));
}

TEST(WhileTest, NestedLoops) {
  // The outer loop runs k = 0, 1, 2, each time the counting loop from (k, 0), which sums k..4:
  // total = (0+1+2+3+4) + (1+2+3+4) + (2+3+4) = 10 + 10 + 9 = 29.
  ir::Literal r = MustRunHlo(std::string(kLoopComputations) + R"(
outer_cond {
  s = (s32[], s32[]) parameter(0)
  k = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(k, three), direction=LT
}
outer_body {
  s = (s32[], s32[]) parameter(0)
  k = s32[] get-tuple-element(s), index=0
  total = s32[] get-tuple-element(s), index=1
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(k, zero)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  sum = s32[] get-tuple-element(w), index=1
  one = s32[] constant(1)
  k1 = s32[] add(k, one)
  total1 = s32[] add(total, sum)
  ROOT t = (s32[], s32[]) tuple(k1, total1)
}
ENTRY e {
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, zero)
  w = (s32[], s32[]) while(init), condition=outer_cond, body=outer_body
  ROOT total = s32[] get-tuple-element(w), index=1
})");
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{29}));
}

// ---------------------------------------------------------------------------------------------
// conditional, call, tuple, get-tuple-element, opt-barrier

constexpr const char* kBranches = R"(
HloModule m
plus_one {
  x = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT r = s32[] add(x, one)
}
times_two {
  x = s32[] parameter(0)
  two = s32[] constant(2)
  ROOT r = s32[] multiply(x, two)
}
negated {
  x = s32[] parameter(0)
  ROOT r = s32[] negate(x)
}
)";

TEST(ConditionalTest, PredicateSelectsTrueOrFalseComputation) {
  const std::string text = std::string(kBranches) + R"(
ENTRY e {
  p = pred[] parameter(0)
  x = s32[] parameter(1)
  ROOT c = s32[] conditional(p, x, x), true_computation=plus_one, false_computation=times_two
})";
  // x = 5: true -> 5 + 1 = 6; false -> 5 * 2 = 10.
  EXPECT_EQ(AsInts(MustRunHlo(text, {Ints(DType::kPred, {}, {1}), Ints(DType::kS32, {}, {5})})),
            (std::vector<int64_t>{6}));
  EXPECT_EQ(AsInts(MustRunHlo(text, {Ints(DType::kPred, {}, {0}), Ints(DType::kS32, {}, {5})})),
            (std::vector<int64_t>{10}));
}

TEST(ConditionalTest, BranchIndexPicksBranchAndOutOfRangeTakesTheLast) {
  // Branch k receives operand k + 1: (10, 20, 30) -> b0 = 10 + 1, b1 = 20 * 2, b2 = -30.
  // XLA runs the last branch for an index < 0 or >= 3.
  const std::string text = std::string(kBranches) + R"(
ENTRY e {
  i = s32[] parameter(0)
  a = s32[] constant(10)
  b = s32[] constant(20)
  c = s32[] constant(30)
  ROOT r = s32[] conditional(i, a, b, c), branch_computations={plus_one, times_two, negated}
})";
  auto run = [&](int64_t index) {
    return AsInts(MustRunHlo(text, {Ints(DType::kS32, {}, {index})}));
  };
  EXPECT_EQ(run(0), (std::vector<int64_t>{11}));
  EXPECT_EQ(run(1), (std::vector<int64_t>{40}));
  EXPECT_EQ(run(2), (std::vector<int64_t>{-30}));
  EXPECT_EQ(run(3), (std::vector<int64_t>{-30}));
  EXPECT_EQ(run(-1), (std::vector<int64_t>{-30}));
}

TEST(CallTest, CallTupleAndGetTupleElement) {
  // f(x, y) = (x + y, x * y); call f(3, 4) = (7, 12); nested tuple ((7, 12), 3), then
  // gte(gte(t, 0), 1) = 12 and gte(t, 1) = 3: 12 - 3 = 9.
  ir::Literal r = MustRunHlo(R"(
HloModule m
f {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  s = s32[] add(x, y)
  p = s32[] multiply(x, y)
  ROOT t = (s32[], s32[]) tuple(s, p)
}
ENTRY e {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  c = (s32[], s32[]) call(x, y), to_apply=f
  t = ((s32[], s32[]), s32[]) tuple(c, x)
  inner = (s32[], s32[]) get-tuple-element(t), index=0
  prod = s32[] get-tuple-element(inner), index=1
  x2 = s32[] get-tuple-element(t), index=1
  ROOT d = s32[] subtract(prod, x2)
})",
                             {Ints(DType::kS32, {}, {3}), Ints(DType::kS32, {}, {4})});
  EXPECT_EQ(AsInts(r), (std::vector<int64_t>{9}));
}

TEST(CallTest, OptimizationBarrierIsIdentity) {
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = s32[] parameter(1)
  t = (f32[2], s32[]) tuple(a, b)
  ROOT o = (f32[2], s32[]) opt-barrier(t)
})",
                             {Vals(DType::kF32, {2}, {1.5, -2}), Ints(DType::kS32, {}, {7})});
  ASSERT_TRUE(r.shape().IsTuple());
  EXPECT_EQ(AsDoubles(r.tuple_element(0)), (std::vector<double>{1.5, -2}));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{7}));
}

// ---------------------------------------------------------------------------------------------
// rng, rng-bit-generator

std::string RngModule(const std::string& type, const std::string& lo, const std::string& hi,
                      const std::string& distribution = "rng_uniform") {
  return "HloModule m\nENTRY e {\n  a = " + type + "[] constant(" + lo + ")\n  b = " + type +
         "[] constant(" + hi + ")\n  ROOT r = " + type +
         "[4096] rng(a, b), distribution=" + distribution + "\n}\n";
}

TEST(RngTest, SameProgramGivesTheSameValuesAndTwoOpsDiffer) {
  const std::string text = RngModule("f32", "0", "1");
  EXPECT_EQ(AsDoubles(MustRunHlo(text)), AsDoubles(MustRunHlo(text)));
  ir::Literal pair = MustRunHlo(R"(
HloModule m
ENTRY e {
  a = f32[] constant(0)
  b = f32[] constant(1)
  r1 = f32[16] rng(a, b), distribution=rng_uniform
  r2 = f32[16] rng(a, b), distribution=rng_uniform
  ROOT t = (f32[16], f32[16]) tuple(r1, r2)
})");
  EXPECT_NE(AsDoubles(pair.tuple_element(0)), AsDoubles(pair.tuple_element(1)));
}

TEST(RngTest, UniformValuesLieInTheHalfOpenRange) {
  for (double v : AsDoubles(MustRunHlo(RngModule("f32", "-2", "3")))) {
    ASSERT_TRUE(v >= -2 && v < 3) << v;
  }
  // s32 in [-3, 4): every one of the 7 values shows up in 4096 draws, 4 never does.
  std::set<int64_t> seen;
  for (int64_t v : AsInts(MustRunHlo(RngModule("s32", "-3", "4")))) {
    ASSERT_TRUE(v >= -3 && v < 4) << v;
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
}

TEST(RngTest, UniformNeverRoundsUpToTheUpperBound) {
  // The only f32 in [1, 1 + 2^-23) is 1: a + (b - a) u rounds to b for u >= 1/2 unless the
  // result is kept below b.
  for (double v : AsDoubles(MustRunHlo(RngModule("f32", "1", "1.00000011920928955078125")))) {
    ASSERT_EQ(v, 1.0);
  }
}

TEST(RngTest, NormalHasTheRequestedMeanAndSpread) {
  // mu = 3, sigma = 2 over 4096 draws: the standard error of the mean is 2 / 64 = 0.03, so the
  // sample mean lies within 0.2 of 3 and the sample deviation within 10% of 2.
  const std::vector<double> v = AsDoubles(MustRunHlo(RngModule("f32", "3", "2", "rng_normal")));
  double sum = 0, sum_sq = 0;
  for (double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  for (double x : v) sum_sq += (x - mean) * (x - mean);
  EXPECT_NEAR(mean, 3.0, 0.2);
  EXPECT_NEAR(std::sqrt(sum_sq / static_cast<double>(v.size())), 2.0, 0.2);
}

TEST(RngTest, BitGeneratorIsDeterministicInItsState) {
  const char* kText = R"(
HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u32[8]) rng-bit-generator(s), algorithm=rng_default
})";
  const ir::Literal state = Ints(DType::kU64, {2}, {42, 7});
  ir::Literal a = MustRunHlo(kText, {state});
  ir::Literal b = MustRunHlo(kText, {state});
  ASSERT_TRUE(a.shape().IsTuple());
  EXPECT_EQ(AsInts(a.tuple_element(1)), AsInts(b.tuple_element(1)));
  EXPECT_EQ(a.tuple_element(1).shape().dims(), (std::vector<int64_t>{8}));
  // The returned state differs from the input, and drawing from it gives new bits.
  EXPECT_NE(AsInts(a.tuple_element(0)), AsInts(state));
  ir::Literal c = MustRunHlo(kText, {a.tuple_element(0)});
  EXPECT_NE(AsInts(c.tuple_element(1)), AsInts(a.tuple_element(1)));
  // Another state gives other bits.
  ir::Literal d = MustRunHlo(kText, {Ints(DType::kU64, {2}, {43, 7})});
  EXPECT_NE(AsInts(d.tuple_element(1)), AsInts(a.tuple_element(1)));
}

// ---------------------------------------------------------------------------------------------
// collectives with one participant

constexpr const char* kAddF32 = R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] add(x, y)
}
wrapped_rs {
  p = f32[4] parameter(0)
  ROOT rs = f32[4] reduce-scatter(p), dimensions={0}, replica_groups={{0}}, to_apply=add
}
)";

TEST(CollectiveTest, SingleParticipantCollectivesAreIdentity) {
  const std::string text = std::string(kAddF32) + R"(
ENTRY e {
  p = f32[4] parameter(0)
  ar = f32[4] all-reduce(p), replica_groups={{0}}, to_apply=add
  ag = f32[4] all-gather(p), dimensions={0}, replica_groups={{0}}
  rs = f32[4] reduce-scatter(p), dimensions={0}, replica_groups={}, to_apply=add
  a2a = f32[4] all-to-all(p), dimensions={0}, replica_groups={{0}}
  cp = f32[4] collective-permute(p), channel_id=1, source_target_pairs={{0,0}}
  ROOT t = (f32[4], f32[4], f32[4], f32[4], f32[4]) tuple(ar, ag, rs, a2a, cp)
})";
  const std::vector<double> p{1, -2, 3.5, 4};
  ir::Literal r = MustRunHlo(text, {Vals(DType::kF32, {4}, p)});
  ASSERT_TRUE(r.shape().IsTuple());
  for (int64_t k = 0; k < 5; ++k) EXPECT_EQ(AsDoubles(r.tuple_element(k)), p) << "element " << k;
}

TEST(CollectiveTest, StartDonePairsAreIdentity) {
  const std::string text = std::string(kAddF32) + R"(
ENTRY e {
  p = f32[4] parameter(0)
  ars = f32[4] all-reduce-start(p), replica_groups={{0}}, to_apply=add
  ard = f32[4] all-reduce-done(ars)
  ags = (f32[4], f32[4]) all-gather-start(p), dimensions={0}, replica_groups={{0}}
  agd = f32[4] all-gather-done(ags)
  cps = (f32[4], f32[4], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,0}}
  cpd = f32[4] collective-permute-done(cps)
  rss = ((f32[4]), f32[4]) async-start(p), calls=wrapped_rs
  rsd = f32[4] async-done(rss)
  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(ard, agd, cpd, rsd)
})";
  const std::vector<double> p{1, -2, 3.5, 4};
  ir::Literal r = MustRunHlo(text, {Vals(DType::kF32, {4}, p)});
  ASSERT_TRUE(r.shape().IsTuple());
  for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(AsDoubles(r.tuple_element(k)), p) << "element " << k;
}

TEST(CollectiveTest, PermuteWithoutASourceGivesZeros) {
  // No pair sends to device 0, so nothing arrives: XLA fills the result with zeros.
  ir::Literal r =
      MustRunHlo(OneOp("f32[3]", "cp = f32[3] collective-permute(p), source_target_pairs={}"),
                 {Vals(DType::kF32, {3}, {1, 2, 3})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{0, 0, 0}));
}

TEST(CollectiveTest, PartitionIdAndReplicaIdAreZero) {
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  pid = u32[] partition-id()
  rid = u32[] replica-id()
  ROOT t = (u32[], u32[]) tuple(pid, rid)
})");
  EXPECT_EQ(AsInts(r.tuple_element(0)), (std::vector<int64_t>{0}));
  EXPECT_EQ(AsInts(r.tuple_element(1)), (std::vector<int64_t>{0}));
}

TEST(CollectiveTest, SeveralDevicesAreAnErrorNamingTheInstruction) {
  const std::vector<ir::Literal> args{Vals(DType::kF32, {4}, {1, 2, 3, 4})};
  auto run = [&](const std::string& root) { return RunHlo(OneOp("f32[4]", root, kAddF32), args); };
  ExpectErrorMentions(run("sum2 = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add"),
                      {"%sum2", "all-reduce", "2 devices"});
  // The iota form [1,4]<=[4] is the group {0,1,2,3}.
  ExpectErrorMentions(
      run("gather4 = f32[16] all-gather(p), dimensions={0}, replica_groups=[1,4]<=[4]"),
      {"%gather4", "4 devices"});
  // A permute from device 1 to device 0 needs device 1's value; zeros would be wrong.
  ExpectErrorMentions(run("swap = f32[4] collective-permute(p), source_target_pairs={{0,1},{1,0}}"),
                      {"%swap", "device 1"});
  // No groups, but the result has two shards' worth of elements.
  ExpectErrorMentions(run("twice = f32[8] all-gather(p), dimensions={0}, replica_groups={}"),
                      {"%twice", "f32[8]"});
}

// ---------------------------------------------------------------------------------------------
// custom-call

TEST(CustomCallTest, KnownTargetsCompute) {
  // Sharding is the identity. With Phi the normal CDF (Phi(1) = 0.8413447461, Phi(2) =
  // 0.9772498681) and phi(1) = exp(-1/2) / sqrt(2 pi) = 0.2419707245:
  //   gelu(x) = x Phi(x):             0 -> 0, 1 -> 0.8413447461, -1 -> -(1 - Phi(1)) =
  //                                   -0.1586552539, 2 -> 2 Phi(2) = 1.9544997361
  //   gelu'(x) = Phi(x) + x phi(x):   0 -> 0.5, 1 -> 1.0833154706
  //   tanh form at 1: (1 + tanh(sqrt(2/pi) * 1.044715)) / 2 = 0.8411919906
  auto run = [](const std::string& target, std::vector<double> x) {
    const std::string shape = "f64[" + std::to_string(x.size()) + "]";
    const std::string root =
        "c = " + shape + " custom-call(p), custom_call_target=\"" + target + "\"";
    return AsDoubles(
        MustRunHlo(OneOp(shape, root), {Vals(DType::kF64, {static_cast<int64_t>(x.size())}, x)}));
  };
  EXPECT_EQ(run("Sharding", {1.5, -2}), (std::vector<double>{1.5, -2}));
  const std::vector<double> gelu = run("AwsNeuronGelu", {0, 1, -1, 2});
  const std::vector<double> expected{0, 0.8413447461, -0.1586552539, 1.9544997361};
  ASSERT_EQ(gelu.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(gelu[i], expected[i], 1e-9) << i;
  const std::vector<double> grad = run("AwsNeuronGeluBackward", {0, 1});
  EXPECT_NEAR(grad[0], 0.5, 1e-12);
  EXPECT_NEAR(grad[1], 1.0833154706, 1e-9);
  EXPECT_NEAR(run("AwsNeuronGeluApprxTanh", {1})[0], 0.8411919906, 1e-9);
}

TEST(CustomCallTest, UnknownTargetIsAnErrorNamingTargetAndInstruction) {
  ExpectErrorMentions(
      RunHlo(
          OneOp("f32[2]", "my_call = f32[2] custom-call(p), custom_call_target=\"MyFancyKernel\""),
          {Vals(DType::kF32, {2}, {1, 2})}),
      {"MyFancyKernel", "%my_call"});
}

TEST(CustomCallTest, ShapeChangingShardingMarkerIsAnError) {
  // SPMDFullToShardShape from f32[4] to f32[2] needs two devices.
  ExpectErrorMentions(
      RunHlo(OneOp("f32[4]",
                   "shard = f32[2] custom-call(p), custom_call_target=\"SPMDFullToShardShape\""),
             {Vals(DType::kF32, {4}, {1, 2, 3, 4})}),
      {"SPMDFullToShardShape", "%shard"});
}

// ---------------------------------------------------------------------------------------------
// batch-norm

// x[n, c, w] of dims [2,2,2] with feature_index=1. Feature 0 holds {0,0,0,4}: mean 1,
// var ((-1)^2 * 3 + 3^2) / 4 = 3. Feature 1 holds {2,2,2,2}: mean 2, var 0.
const std::vector<double> kBnX{0, 0, 2, 2, 0, 4, 2, 2};

TEST(BatchNormTest, TrainingNormalizesWithBatchStatistics) {
  // eps = 1: sqrt(var + eps) = 2 for feature 0 and 1 for feature 1. scale {3, 5}, offset {1, -1}:
  //   feature 0: (x - 1) / 2 * 3 + 1 -> x=0: -0.5, x=4: 5.5;  feature 1: 0 * 5 - 1 = -1.
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  x = f32[2,2,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  ROOT bn = (f32[2,2,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=1, feature_index=1
})",
                             {Vals(DType::kF32, {2, 2, 2}, kBnX), Vals(DType::kF32, {2}, {3, 5}),
                              Vals(DType::kF32, {2}, {1, -1})});
  ASSERT_TRUE(r.shape().IsTuple());
  EXPECT_EQ(AsDoubles(r.tuple_element(0)),
            (std::vector<double>{-0.5, -0.5, -1, -1, -0.5, 5.5, -1, -1}));
  EXPECT_EQ(AsDoubles(r.tuple_element(1)), (std::vector<double>{1, 2}));
  EXPECT_EQ(AsDoubles(r.tuple_element(2)), (std::vector<double>{3, 0}));
}

TEST(BatchNormTest, InferenceUsesTheGivenStatistics) {
  // mean {0, 0}, var {3, 3}, eps 1: divide by 2. Feature 0: x / 2 * 3 + 1 -> 0: 1, 4: 7;
  // feature 1: 2 / 2 * 5 - 1 = 4.
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  x = f32[2,2,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  m = f32[2] parameter(3)
  v = f32[2] parameter(4)
  ROOT bn = f32[2,2,2] batch-norm-inference(x, s, o, m, v), epsilon=1, feature_index=1
})",
                             {Vals(DType::kF32, {2, 2, 2}, kBnX), Vals(DType::kF32, {2}, {3, 5}),
                              Vals(DType::kF32, {2}, {1, -1}), Vals(DType::kF32, {2}, {0, 0}),
                              Vals(DType::kF32, {2}, {3, 3})});
  EXPECT_EQ(AsDoubles(r), (std::vector<double>{1, 1, 4, 4, 1, 7, 4, 4}));
}

TEST(BatchNormTest, GradMatchesTheHandDerivative) {
  // One feature, x = {0,0,0,4}, mean 1, var 3, eps 1 -> r = 1/sqrt(4) = 1/2, scale 3, N = 4,
  // dy = {1,0,0,1}, x - mean = {-1,-1,-1,3}:
  //   grad_offset = sum(dy) = 2;  grad_scale = sum(dy (x - mean)) r = (-1 + 3) / 2 = 1
  //   grad_x = 3 r / N (N dy - sum(dy) - (x - mean) * 2 * r^2) = 0.375 (4 dy - 2 - (x - mean) / 2)
  //          = {0.375 * 2.5, 0.375 * -1.5, 0.375 * -1.5, 0.375 * 0.5}
  ir::Literal r = MustRunHlo(R"(
HloModule m
ENTRY e {
  x = f32[4,1] parameter(0)
  s = f32[1] parameter(1)
  m = f32[1] parameter(2)
  v = f32[1] parameter(3)
  dy = f32[4,1] parameter(4)
  ROOT g = (f32[4,1], f32[1], f32[1]) batch-norm-grad(x, s, m, v, dy), epsilon=1, feature_index=1
})",
                             {Vals(DType::kF32, {4, 1}, {0, 0, 0, 4}), Vals(DType::kF32, {1}, {3}),
                              Vals(DType::kF32, {1}, {1}), Vals(DType::kF32, {1}, {3}),
                              Vals(DType::kF32, {4, 1}, {1, 0, 0, 1})});
  ASSERT_TRUE(r.shape().IsTuple());
  EXPECT_EQ(AsDoubles(r.tuple_element(0)), (std::vector<double>{0.9375, -0.5625, -0.5625, 0.1875}));
  EXPECT_EQ(AsDoubles(r.tuple_element(1)), (std::vector<double>{1}));
  EXPECT_EQ(AsDoubles(r.tuple_element(2)), (std::vector<double>{2}));
}

TEST(BatchNormTest, MalformedOperandsAreErrorsNotCrashes) {
  // The parser rejects a missing operand, but a computation built in memory reaches the
  // interpreter, which must report it instead of reading past the operand list.
  const ir::Shape vec = S(DType::kF32, {2});
  ExpectErrorMentions(
      EvalOp(ir::Opcode::kBatchNormTraining, ir::Shape::Tuple({S(DType::kF32, {2, 2}), vec, vec}),
             {Vals(DType::kF32, {2, 2}, {1, 2, 3, 4}), Vals(DType::kF32, {2}, {1, 1})},
             [](ir::Attributes& a) {
               a.feature_index = 1;
               a.epsilon = 1;
             }),
      {"batch-norm-training", "expects 3 operands"});
  // A scale with one element for two features.
  ExpectErrorMentions(RunHlo(R"(
HloModule m
ENTRY e {
  x = f32[2,2] parameter(0)
  s = f32[1] parameter(1)
  m = f32[2] parameter(2)
  v = f32[2] parameter(3)
  ROOT short_scale = f32[2,2] batch-norm-inference(x, s, s, m, v), epsilon=1, feature_index=1
})",
                             {Vals(DType::kF32, {2, 2}, {1, 2, 3, 4}), Vals(DType::kF32, {1}, {1}),
                              Vals(DType::kF32, {2}, {0, 0}), Vals(DType::kF32, {2}, {1, 1})}),
                      {"%short_scale", "f32[1]"});
}

}  // namespace
}  // namespace alpa::interp::testing
