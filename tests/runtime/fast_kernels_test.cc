// The fast kernels against the reference interpreter (the cross-backend consistency harness): each
// case runs one module through the executor twice, with its fast kernels and with every
// instruction on the interpreter's handlers, on the same random arguments, and compares the
// results bit for bit, within a few ulp (the approximated functions) or within a relative bound
// (row sums, added in another order). The f16 and bf16 cases are f32 cases retyped. Also: what
// gets no fast kernel, and whole training steps of the zoo, where the fast kernels must cover
// every op but the listed ones and agree with the interpreter.
#include "runtime/fast_kernels.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/train_step.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "interp/random_inputs.h"
#include "ir/loop_fusion.h"
#include "models/zoo.h"
#include "runtime/device_executor.h"
#include "runtime/fast_kernels_internal.h"
#include "runtime/instruction_list.h"
#include "tests/kernels/test_util.h"

namespace alpa::runtime {
namespace {

enum class Agreement { kBitExact, kUlps, kSum };

struct Case {
  Case(std::string name, std::string body, Agreement agreement = Agreement::kBitExact,
       std::string reference_body = "")
      : name(std::move(name)),
        body(std::move(body)),
        agreement(agreement),
        reference_body(std::move(reference_body)) {}

  std::string name;
  std::string body;  // the entry's instructions; its root is the op under test
  Agreement agreement;
  // What the interpreter runs in its place, on the same arguments, when the two are meant to
  // compute one function differently (empty: `body`).
  std::string reference_body;
};

// 3 x 257 x 129 = 99,459 elements: several chunks of the parallel loops and a ragged tail.
constexpr char kS[] = "f32[3,257,129]";

// The reducers `sum` and `max` of one float type, named with the type after an underscore.
std::string Reducers(const std::string& type) {
  return fmt::format(
      "sum_{0} {{ a = {0}[] parameter(0)\n b = {0}[] parameter(1)\n ROOT s = {0}[] add(a, b) }}\n"
      "max_{0} {{ a = {0}[] parameter(0)\n b = {0}[] parameter(1)\n"
      " ROOT m = {0}[] maximum(a, b) }}\n",
      type);
}

std::unique_ptr<ir::Module> ParseEntry(const std::string& body) {
  Result<std::unique_ptr<ir::Module>> module = hlo::ParseHloModule(
      "HloModule m\nsum { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
      " ROOT s = f32[] add(a, b) }\n"
      "max { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
      " ROOT m = f32[] maximum(a, b) }\n" +
          Reducers("f16") + Reducers("bf16") +
          "product { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
          " ROOT p = f32[] multiply(a, b) }\n"
          "sum_s32 { a = s32[] parameter(0)\n b = s32[] parameter(1)\n"
          " ROOT s = s32[] add(a, b) }\n"
          "max_s32 { a = s32[] parameter(0)\n b = s32[] parameter(1)\n"
          " ROOT m = s32[] maximum(a, b) }\n"
          "ENTRY main {\n" +
          body + "\n}",
      "test");
  EXPECT_TRUE(module.ok()) << module.status().message() << "\n" << body;
  return module.ok() ? std::move(module).value() : nullptr;
}

struct Runs {
  ir::Literal fast;
  ir::Literal reference;
  double input_magnitude = 0;  // sum of |x| over the first argument: what bounds a sum's error
};

Runs RunBothWays(const ir::Module& module, uint64_t seed,
                 const ir::Module* reference_module = nullptr) {
  Result<InstructionList> list = CompileInstructionList(module);
  Result<InstructionList> reference_list = CompileInstructionList(
      reference_module ? *reference_module : module, KernelChoice::kReference);
  EXPECT_TRUE(list.ok() && reference_list.ok());
  if (!list.ok() || !reference_list.ok()) return {};
  std::vector<ir::Literal> arguments = interp::RandomArguments(*module.entry(), seed);
  Result<ir::Literal> fast = ExecuteInstructionList(*list, arguments, {});
  Result<ir::Literal> reference = ExecuteInstructionList(*reference_list, arguments, {});
  EXPECT_TRUE(fast.ok()) << fast.status().message();
  EXPECT_TRUE(reference.ok()) << reference.status().message();
  if (!fast.ok() || !reference.ok()) return {};
  const double magnitude = arguments.empty() ? 0 : interp::ComputeChecksum(arguments[0]).abs_sum;
  return {std::move(fast).value(), std::move(reference).value(), magnitude};
}

// Worst ulp distance (in ulps of the elements' own type), worst |fast - reference| /
// (1 + |reference|) and worst |fast - reference|, over float elements.
struct Gap {
  int64_t ulps = 0;
  double relative = 0;
  double absolute = 0;
};

Gap Compare(const ir::Literal& fast, const ir::Literal& reference) {
  // f16 and bf16 values are f32 values whose low 13 and 16 mantissa bits are zero (f16's normal
  // range): one of their ulps is that many f32 ulps.
  const ir::DType dtype = fast.shape().dtype();
  const int64_t f32_ulps_per_ulp = dtype == ir::DType::kBF16  ? (1 << 16)
                                   : dtype == ir::DType::kF16 ? (1 << 13)
                                                              : 1;
  Gap gap;
  for (int64_t i = 0; i < fast.element_count(); ++i) {
    const float x = static_cast<float>(fast.GetDouble(i));
    const float y = static_cast<float>(reference.GetDouble(i));
    if (std::isnan(x) && std::isnan(y)) continue;
    gap.ulps = std::max(gap.ulps, kernels::testing::UlpDistance(x, y) / f32_ulps_per_ulp);
    const double difference = std::fabs(double{x} - y);
    gap.relative = std::max(gap.relative, difference / (1 + std::fabs(y)));
    gap.absolute = std::max(gap.absolute, difference);
  }
  return gap;
}

std::vector<Case> Cases() {
  const std::string s = kS;
  const std::string p = "p = " + s + " parameter(0)\n";
  const std::string pq = p + "q = " + s + " parameter(1)\n";
  std::vector<Case> cases;
  for (const char* op : {"negate", "abs"}) {
    cases.push_back({op, p + "ROOT r = " + s + " " + op + "(p)", Agreement::kBitExact});
  }
  for (const char* op : {"exponential", "tanh", "logistic"}) {
    cases.push_back({op, p + "ROOT r = " + s + " " + op + "(p)", Agreement::kUlps});
  }
  for (const char* op : {"sqrt", "rsqrt"}) {
    cases.push_back({op, p + "a = " + s + " abs(p)\nROOT r = " + s + " " + op + "(a)"});
  }
  cases.push_back({"log", p + "a = " + s + " abs(p)\nROOT r = " + s + " log(a)", Agreement::kUlps});
  // RoPE's angles: positions times frequencies, thousands of radians.
  for (const char* op : {"sine", "cosine"}) {
    cases.push_back({op, p + "k = f32[] constant(5000)\nb = " + s +
                             " broadcast(k), dimensions={}\n" + "a = " + s +
                             " multiply(p, b)\nROOT r = " + s + " " + op + "(a)"});
  }
  cases.push_back({"constant", "ROOT r = f32[2,3] constant({{1, -2, 3.5}, {0, 7, -0.25}})"});
  for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power"}) {
    cases.push_back({op, pq + "ROOT r = " + s + " " + op + "(p, q)"});
  }
  const std::string pred = "pred[3,257,129]";
  cases.push_back(
      {"compare and select",
       pq + "c = " + pred + " compare(p, q), direction=GT\nROOT r = " + s + " select(c, p, q)"});
  cases.push_back({"iota, s32 compare, converts",
                   "i = s32[3,257,129] iota(), iota_dimension=1\n"
                   "j = s32[3,257,129] iota(), iota_dimension=2\n"
                   "c = " +
                       pred +
                       " compare(i, j), direction=GE\n"
                       "a = " +
                       s + " convert(c)\nb = " + s +
                       " convert(i)\n"
                       "f = " +
                       s +
                       " iota(), iota_dimension=0\n"
                       "x = " +
                       s + " add(a, b)\nROOT r = " + s + " add(x, f)"});
  cases.push_back({"and, or", pq + "c = " + pred + " compare(p, q), direction=GT\n" +
                                  "d = " + pred + " compare(q, p), direction=LE\n" + "a = " + pred +
                                  " and(c, d)\nROOT r = " + pred + " or(a, c)"});
  const std::string i = "i = s32[3,257,129] iota(), iota_dimension=1\n";
  cases.push_back({"clamp by scalars", i + "lo = s32[] constant(10)\nhi = s32[] constant(200)\n" +
                                           "ROOT r = s32[3,257,129] clamp(lo, i, hi)"});
  cases.push_back({"clamp by arrays", i + "lo = s32[3,257,129] iota(), iota_dimension=2\n"
                                          "hi = s32[3,257,129] iota(), iota_dimension=0\n"
                                          "ROOT r = s32[3,257,129] clamp(lo, i, hi)"});
  cases.push_back({"broadcast materialised",
                   "v = f32[257] parameter(0)\n"
                   "a = " +
                       s +
                       " broadcast(v), dimensions={1}\n"
                       "n = " +
                       s +
                       " reverse(a), dimensions={0}\n"
                       "ROOT r = " +
                       s + " add(n, a)"});
  cases.push_back(
      {"broadcasts read in place",
       "v = f32[257] parameter(0)\nm = f32[3,129] parameter(1)\nk = f32[] parameter(2)\n"
       "a = " +
           s +
           " broadcast(v), dimensions={1}\n"
           "b = " +
           s +
           " broadcast(m), dimensions={0,2}\n"
           "c = " +
           s +
           " broadcast(k), dimensions={}\n"
           "x = " +
           s + " add(a, b)\nROOT r = " + s + " add(x, c)"});
  // Random s32 indices lie in [0, 8): rows 6 and 7 are out of the table, so gather clamps them
  // and scatter skips them; 771 indices into 6 rows repeat, so scatter adds in order.
  const std::string table = "t = f32[6,600] parameter(0)\ni = s32[3,257] parameter(1)\n";
  cases.push_back({"gather rows", table + "ROOT r = f32[3,257,600] gather(t, i), offset_dims={2}, "
                                          "collapsed_slice_dims={0}, start_index_map={0}, "
                                          "index_vector_dim=2, slice_sizes={1,600}"});
  cases.push_back({"scatter-add rows", table +
                                           "u = f32[3,257,600] parameter(2)\n"
                                           "ROOT r = f32[6,600] scatter(t, i, u), "
                                           "update_window_dims={2}, inserted_window_dims={0}, "
                                           "scatter_dims_to_operand_dims={0}, index_vector_dim=2, "
                                           "to_apply=sum"});
  cases.push_back({"transpose", p + "ROOT r = f32[129,3,257] transpose(p), dimensions={2,0,1}"});
  cases.push_back(
      {"transpose tiles", p + "ROOT r = f32[3,129,257] transpose(p), dimensions={0,2,1}"});
  cases.push_back({"reshape", p + "ROOT r = f32[771,129] reshape(p)"});
  cases.push_back(
      {"slice", p + "ROOT r = f32[3,128,32] slice(p), slice={[0:3], [1:257:2], [5:100:3]}"});
  // Start indices past the end are clamped so that the window fits.
  cases.push_back({"dynamic-slice", p + "i = s32[] constant(1)\nj = s32[] constant(200)\n" +
                                        "k = s32[] constant(-3)\n" +
                                        "ROOT r = f32[2,100,64] dynamic-slice(p, i, j, k), " +
                                        "dynamic_slice_sizes={2,100,64}"});
  cases.push_back({"reverse", p + "ROOT r = " + s + " reverse(p), dimensions={0,2}"});
  cases.push_back(
      {"concatenate", pq + "ROOT r = f32[3,771,129] concatenate(p, q, p), dimensions={1}"});
  cases.push_back({"pad", p + "z = f32[] constant(-2)\n"
                              "ROOT r = f32[6,257,388] pad(p, z), padding=1_2x0_0x3_0_2"});
  cases.push_back(
      {"reduce columns", p + "z = f32[] constant(0.5)\n"
                             "ROOT r = f32[257,129] reduce(p, z), dimensions={0}, to_apply=sum"});
  cases.push_back(
      {"reduce middle", p + "z = f32[] constant(0)\n"
                            "ROOT r = f32[3,129] reduce(p, z), dimensions={1}, to_apply=sum"});
  cases.push_back(
      {"reduce row max", p + "z = f32[] constant(-inf)\n"
                             "ROOT r = f32[3,257] reduce(p, z), dimensions={2}, to_apply=max"});
  cases.push_back({"reduce rows",
                   p + "z = f32[] constant(0)\n"
                       "ROOT r = f32[3] reduce(p, z), dimensions={1,2}, to_apply=sum",
                   Agreement::kSum});
  cases.push_back({"reduce all",
                   p + "z = f32[] constant(1)\n"
                       "ROOT r = f32[] reduce(p, z), dimensions={0,1,2}, to_apply=sum",
                   Agreement::kSum});
  // s32 folds are exact in any order: the sums wrap around (2^24 * 257 rows overflow).
  const std::string big =
      "x = s32[3,257,129] parameter(0)\nk = s32[] constant(16777216)\n"
      "b = s32[3,257,129] broadcast(k), dimensions={}\n"
      "m = s32[3,257,129] multiply(x, b)\nz = s32[] constant(7)\n";
  cases.push_back({"reduce s32 columns, wrapping",
                   big + "ROOT r = s32[3,129] reduce(m, z), dimensions={1}, to_apply=sum_s32"});
  cases.push_back({"reduce s32 rows",
                   big + "ROOT r = s32[3] reduce(x, z), dimensions={1,2}, to_apply=sum_s32"});
  cases.push_back({"reduce s32 row max",
                   big + "ROOT r = s32[3,257] reduce(m, z), dimensions={2}, to_apply=max_s32"});
  cases.push_back({"dot in place",
                   "p = f32[4,33,65] parameter(0)\nq = f32[4,65,17] parameter(1)\n"
                   "ROOT r = f32[4,33,17] dot(p, q), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
                   "rhs_batch_dims={0}, rhs_contracting_dims={1}"});
  cases.push_back({"dot of transposed operands",
                   "p = f32[96,40] parameter(0)\nq = f32[24,96] parameter(1)\n"
                   "ROOT r = f32[40,24] dot(p, q), lhs_contracting_dims={0}, "
                   "rhs_contracting_dims={1}"});
  // The attention's q k^T (rhs matrices transposed) and p^T dO (lhs ones), and groups of several
  // dimensions: read in place.
  cases.push_back({"dot of batches of transposed matrices",
                   "p = f32[4,33,16] parameter(0)\nq = f32[4,17,16] parameter(1)\n"
                   "a = f32[4,33,17] dot(p, q), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
                   "rhs_batch_dims={0}, rhs_contracting_dims={2}\n"
                   "ROOT r = f32[4,17,16] dot(a, p), lhs_batch_dims={0}, lhs_contracting_dims={1}, "
                   "rhs_batch_dims={0}, rhs_contracting_dims={1}"});
  cases.push_back({"dot of transposed groups of dimensions",
                   "p = f32[6,5,7,3] parameter(0)\nq = f32[9,6,5] parameter(1)\n"
                   "ROOT r = f32[7,3,9] dot(p, q), lhs_contracting_dims={0,1}, "
                   "rhs_contracting_dims={1,2}"});
  // A batch dimension that does not lead: the lhs is copied into order first.
  cases.push_back({"dot of operands in other orders",
                   "p = f32[5,4,6,7] parameter(0)\nq = f32[4,7,3] parameter(1)\n"
                   "ROOT r = f32[4,5,6,3] dot(p, q), lhs_batch_dims={1}, "
                   "lhs_contracting_dims={3}, rhs_batch_dims={0}, rhs_contracting_dims={1}"});
  return cases;
}

// `text` with every f32 in it `type`, and the f32 reducers `type`'s.
std::string Retyped(std::string text, const std::string& type) {
  for (auto [from, to] : {std::pair<std::string, std::string>{"f32[", type + "["},
                          {"to_apply=sum", "to_apply=sum_" + type},
                          {"to_apply=max", "to_apply=max_" + type}}) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
      text.replace(at, from.size(), to);
      at += to.size();
    }
  }
  return text;
}

// The f32 cases that mean the same in f16 and bf16, retyped, and what only 16 bits have. The
// kernels compute in f32 and round once, as the interpreter does: exact functions give its bytes;
// the approximated ones and the dots (f32 sums in another order) are within one 16-bit ulp. A
// 16-bit sum is compared with what JAX's own reductions compute (convert to f32, reduce, convert
// back), which the interpreter, rounding after every step of a 16-bit reducer, does not.
std::vector<Case> SixteenBitCases(const std::string& type) {
  const std::set<std::string> retyped = {"negate",
                                         "abs",
                                         "exponential",
                                         "tanh",
                                         "logistic",
                                         "sqrt",
                                         "rsqrt",
                                         "log",
                                         "add",
                                         "subtract",
                                         "multiply",
                                         "divide",
                                         "maximum",
                                         "minimum",
                                         "power",
                                         "compare and select",
                                         "broadcasts read in place",
                                         "scatter-add rows",
                                         "reduce row max",
                                         "dot in place",
                                         "dot of transposed operands",
                                         "dot of batches of transposed matrices",
                                         "dot of transposed groups of dimensions",
                                         "dot of operands in other orders"};
  std::vector<Case> cases;
  for (const Case& c : Cases()) {
    if (!retyped.count(c.name)) continue;
    const bool dot = c.name.starts_with("dot");
    cases.push_back(
        {type + " " + c.name, Retyped(c.body, type), dot ? Agreement::kUlps : c.agreement});
  }
  const std::string s = type + "[3,257,129]";
  const std::string p = "p = " + s + " parameter(0)\n";
  cases.push_back({type + " converts",
                   "p = f32[3,257,129] parameter(0)\nq = " + s + " parameter(1)\n" + "n = " + s +
                       " convert(p)\nw = f32[3,257,129] convert(q)\n" +
                       "o = " + (type == "f16" ? "bf16" : "f16") + "[3,257,129] convert(n)\n" +
                       "c = pred[3,257,129] compare(w, p), direction=GT\n" + "b = " + s +
                       " convert(c)\nm = " + s + " convert(o)\n" + "ROOT r = " + s + " add(m, b)"});
  const std::string sum = type + "[3] reduce(p, z), dimensions={1,2}, to_apply=sum_" + type;
  cases.push_back({type + " reduce rows as JAX sums",
                   p + "z = " + type + "[] constant(0.5)\nROOT r = " + sum, Agreement::kUlps,
                   p + "w = f32[3,257,129] convert(p)\nz = f32[] constant(0.5)\n" +
                       "y = f32[3] reduce(w, z), dimensions={1,2}, to_apply=sum\n" +
                       "ROOT r = " + type + "[3] convert(y)"});
  return cases;
}

// A broadcast whose users all read it in place gets no step (and no buffer); one that a user
// must see whole runs as data movement.
TEST(FastKernelsTest, BroadcastsReadInPlaceGetNoStep) {
  auto broadcast_steps = [](const std::string& name) {
    for (const Case& c : Cases()) {
      if (c.name != name) continue;
      std::unique_ptr<ir::Module> module = ParseEntry(c.body);
      Result<InstructionList> list = CompileInstructionList(*module);
      EXPECT_TRUE(list.ok());
      return std::count_if(list->steps.begin(), list->steps.end(), [](const InstructionStep& s) {
        return s.instruction->opcode() == ir::Opcode::kBroadcast;
      });
    }
    return std::ptrdiff_t{-1};
  };
  EXPECT_EQ(broadcast_steps("broadcasts read in place"), 0);
  EXPECT_EQ(broadcast_steps("broadcast materialised"), 1);
}

// Loop fusion (ir) admits the unary and binary opcodes the elementwise kernels compute, and only
// those: a loop op the runtime could not map to a kernel would fail at run time.
TEST(FastKernelsTest, LoopOpcodesAreTheElementwiseKernelsOpcodes) {
  for (int i = 0; i < ir::kOpcodeCount; ++i) {
    const auto opcode = static_cast<ir::Opcode>(i);
    EXPECT_EQ(ir::IsLoopUnaryOpcode(opcode), internal::UnaryFnOf(opcode).has_value())
        << ir::OpcodeName(opcode);
    EXPECT_EQ(ir::IsLoopBinaryOpcode(opcode), internal::BinaryFnOf(opcode).has_value())
        << ir::OpcodeName(opcode);
  }
}

TEST(FastKernelsTest, AgreeWithTheInterpreter) {
  std::vector<Case> cases = Cases();
  for (const char* type : {"f16", "bf16"}) {
    for (Case& c : SixteenBitCases(type)) cases.push_back(std::move(c));
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<ir::Module> module = ParseEntry(c.body);
    ASSERT_NE(module, nullptr);
    ASSERT_NE(SelectFastKernel(*module->entry()->root()), nullptr) << "no fast kernel chosen";
    std::unique_ptr<ir::Module> reference =
        c.reference_body.empty() ? nullptr : ParseEntry(c.reference_body);
    const Runs runs = RunBothWays(*module, 7, reference.get());
    ASSERT_TRUE(runs.fast.shape().Compatible(runs.reference.shape()));
    const bool sixteen_bit = runs.fast.shape().dtype() != ir::DType::kF32;
    switch (c.agreement) {
      case Agreement::kBitExact:
        EXPECT_TRUE(runs.fast == runs.reference);
        break;
      case Agreement::kUlps:
        EXPECT_LE(Compare(runs.fast, runs.reference).ulps, sixteen_bit ? 1 : 8);
        break;
      case Agreement::kSum:
        // Both are f32 sums in different orders; each is within n * eps * sum |x| of the exact
        // sum, the interpreter's sequential one the further off.
        EXPECT_LE(Compare(runs.fast, runs.reference).absolute, 1e-6 * runs.input_magnitude);
        break;
    }
  }
}

TEST(FastKernelsTest, LeavesToTheInterpreterWhatTheyDoNotDefine) {
  const std::vector<std::string> roots = {
      "p = f64[8] parameter(0)\nROOT r = f64[8] add(p, p)",
      "p = s32[8] parameter(0)\nROOT r = bf16[8] convert(p)",
      "p = f32[8] parameter(0)\nROOT r = f32[8] tan(p)",
      "p = f32[8] parameter(0)\nROOT r = f32[8] clamp(p, p, p)",
      "p = f32[8] parameter(0)\nROOT r = pred[8] compare(p, p), direction=LT, type=TOTALORDER",
      "p = f32[8] parameter(0)\nz = f32[] constant(0)\nROOT r = f32[7] pad(p, z), padding=-1_0",
      "p = f32[4,5,6] parameter(0)\nz = f32[] constant(0)\n"
      "ROOT r = f32[5] reduce(p, z), dimensions={0,2}, to_apply=sum",
      "p = f32[4,5] parameter(0)\nz = f32[] constant(1)\n"
      "ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=product",
      "p = f32[4,5] parameter(0)\nROOT r = f32[5,5] broadcast(p), dimensions={0}",
  };
  for (const std::string& body : roots) {
    std::unique_ptr<ir::Module> module = ParseEntry(body);
    ASSERT_NE(module, nullptr);
    EXPECT_EQ(SelectFastKernel(*module->entry()->root()), nullptr) << body;
  }
}

// Every pair of a model and an element type.
std::vector<std::pair<std::string, ir::DType>> Product(const std::vector<std::string>& models,
                                                       const std::vector<ir::DType>& dtypes) {
  std::vector<std::pair<std::string, ir::DType>> pairs;
  for (const std::string& model : models) {
    for (ir::DType dtype : dtypes) pairs.emplace_back(model, dtype);
  }
  return pairs;
}

// The zoo's train steps with SGD (Adam divides by each gradient's own magnitude, so a gradient
// that is zero up to rounding would move by the learning rate in either direction).
TEST(FastKernelsTest, TrainStepsUseThemAndAgreeWithTheInterpreter) {
  // What the fast kernels leave to the interpreter in these steps (opcodes of the non-scalar
  // arrays, in every type): convolution (oneDNN's, inside the interpreter's handler) and the
  // pooling window ops. The embedding's gather and scatter are rows, which the fast kernels do.
  const std::set<std::string> interpreted = {"convolution", "reduce-window", "select-and-scatter"};
  for (const auto& [name, dtype] :
       Product({"gpt-tiny", "moe-tiny", "llama-tiny", "mixtral-tiny", "wresnet-tiny"},
               {ir::DType::kF32, ir::DType::kBF16, ir::DType::kF16})) {
    SCOPED_TRACE(fmt::format("{} {}", name, ir::DTypeName(dtype)));
    models::ZooOverrides overrides;
    overrides.dtype = dtype;
    Result<models::ZooModel> zoo = models::BuildZooModel(name, overrides);
    ASSERT_TRUE(zoo.ok()) << zoo.status().message();
    autodiff::TrainStepOptions options = zoo->training;
    options.optimizer.kind = autodiff::OptimizerKind::kSgd;
    Result<std::unique_ptr<ir::Module>> step =
        autodiff::BuildTrainStep(*zoo->model.loss, zoo->model.weights, options);
    ASSERT_TRUE(step.ok()) << step.status().message();
    Result<InstructionList> list = CompileInstructionList(**step);
    ASSERT_TRUE(list.ok());
    int64_t fast = 0, loops = 0;
    for (const InstructionStep& s : list->steps) {
      const bool is_fast = s.fast_kernel != nullptr || s.loop != nullptr;
      fast += is_fast;
      loops += s.loop != nullptr;
      if (!is_fast && s.instruction->shape().IsArray() && s.instruction->shape().rank() > 0) {
        EXPECT_TRUE(interpreted.count(std::string(ir::OpcodeName(s.instruction->opcode()))))
            << hlo::PrintInstruction(*s.instruction);
      }
    }
    EXPECT_GT(fast, static_cast<int64_t>(list->steps.size()) / 2);
    EXPECT_GT(loops, 0);  // SGD's update p - lr * g at least (ir/loop_fusion.h)
    // A 16-bit model's gradients are 16-bit sums and products: where the two runs round one
    // value differently (an approximated function or a sum in another order lands on the other
    // side of a rounding boundary), the difference is an ulp of the model's type, and the rest
    // of the step carries it on. The results (f32 master weights) may then differ by up to the
    // type's epsilon relative; an f32 step keeps to its own rounding.
    const double tolerance = dtype == ir::DType::kF16    ? 0x1p-10
                             : dtype == ir::DType::kBF16 ? 0x1p-7
                                                         : 1e-4;
    const Runs runs = RunBothWays(**step, 11);
    ASSERT_TRUE(runs.fast.shape().IsTuple());
    for (int64_t i = 0; i < static_cast<int64_t>(runs.fast.tuple_elements().size()); ++i) {
      const ir::Literal& value = runs.reference.tuple_element(i);
      if (!ir::IsFloating(value.shape().dtype())) continue;
      EXPECT_LE(Compare(runs.fast.tuple_element(i), value).relative, tolerance) << "result " << i;
    }
  }
}

}  // namespace
}  // namespace alpa::runtime
