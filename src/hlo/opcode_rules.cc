#include "hlo/opcode_rules.h"

#include <array>

namespace alpa::hlo {
namespace {

using ir::Opcode;

constexpr bool kRequired = true;
constexpr bool kOptional = false;

// Attribute groups shared by several opcodes.
const std::vector<AttributeRule> kCollective = {
    {"replica_groups", kOptional},
    {"channel_id", kOptional},
    {"use_global_device_ids", kOptional},
    {"constrain_layout", kOptional},
};

std::vector<AttributeRule> Join(std::vector<AttributeRule> a, const std::vector<AttributeRule>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

OpcodeRules MakeRules(Opcode opcode) {
  if (ir::IsElementwiseUnary(opcode)) return {1, 1, {}};
  if (ir::IsElementwiseBinary(opcode)) return {2, 2, {}};
  switch (opcode) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
    case Opcode::kRngGetAndUpdateState:
      return {0, 0, {}};
    case Opcode::kIota:
      return {0, 0, {{"iota_dimension", kRequired}}};
    case Opcode::kGetTupleElement:
      return {1, 1, {{"index", kRequired}}};
    case Opcode::kBroadcast:
    case Opcode::kTranspose:
      return {1, 1, {{"dimensions", kRequired}}};
    case Opcode::kReverse:
      return {1, 1, {{"dimensions", kRequired}}};
    case Opcode::kConcatenate:
      return {1, -1, {{"dimensions", kRequired}}};
    // get-dimension-size(x), dimensions={d}; set-dimension-size(x, size), dimensions={d}.
    case Opcode::kGetDimensionSize:
      return {1, 1, {{"dimensions", kRequired}}};
    case Opcode::kSetDimensionSize:
      return {2, 2, {{"dimensions", kRequired}}};
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kBitcastConvert:
    case Opcode::kConvert:
    case Opcode::kCopy:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
    case Opcode::kReal:
    case Opcode::kImag:
    case Opcode::kIsFinite:
    case Opcode::kCholesky:
    case Opcode::kFft:
    case Opcode::kAllGatherDone:
    case Opcode::kAllReduceDone:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kSendDone:
    case Opcode::kRecvDone:
      return {1, 1, {}};
    case Opcode::kClamp:
    case Opcode::kSelect:
      return {3, 3, {}};
    case Opcode::kComplex:
    case Opcode::kAddDependency:
    case Opcode::kStochasticConvert:
    case Opcode::kTriangularSolve:
    case Opcode::kDynamicReshape:
      return {2, 2, {}};
    case Opcode::kCompare:
      return {2, 2, {{"direction", kRequired}, {"type", kOptional}}};
    case Opcode::kSlice:
      return {1, 1, {{"slice", kRequired}}};
    case Opcode::kDynamicSlice:
      return {1, -1, {{"dynamic_slice_sizes", kRequired}}};
    case Opcode::kDynamicUpdateSlice:
      return {2, -1, {}};
    case Opcode::kPad:
      return {2, 2, {{"padding", kRequired}}};
    case Opcode::kDot:
      return {2,
              2,
              {{"lhs_batch_dims", kOptional},
               {"rhs_batch_dims", kOptional},
               {"lhs_contracting_dims", kOptional},
               {"rhs_contracting_dims", kOptional}}};
    case Opcode::kConvolution:
      return {2,
              2,
              {{"window", kOptional},
               {"dim_labels", kRequired},
               {"feature_group_count", kOptional},
               {"batch_group_count", kOptional}}};
    case Opcode::kReduce:
      return {2, -1, {{"dimensions", kRequired}, {"to_apply", kRequired}}};
    case Opcode::kReduceWindow:
      return {2, -1, {{"window", kRequired}, {"to_apply", kRequired}}};
    case Opcode::kSelectAndScatter:
      return {3, 3, {{"window", kRequired}, {"select", kRequired}, {"scatter", kRequired}}};
    case Opcode::kMap:
      return {1, -1, {{"dimensions", kOptional}, {"to_apply", kRequired}}};
    case Opcode::kSort:
      return {
          1, -1, {{"dimensions", kRequired}, {"is_stable", kOptional}, {"to_apply", kRequired}}};
    case Opcode::kTopK:
      return {1, 1, {{"k", kRequired}, {"largest", kOptional}}};
    case Opcode::kGather:
      return {2,
              2,
              {{"offset_dims", kRequired},
               {"collapsed_slice_dims", kRequired},
               {"start_index_map", kRequired},
               {"index_vector_dim", kRequired},
               {"operand_batching_dims", kOptional},
               {"start_indices_batching_dims", kOptional},
               {"slice_sizes", kRequired},
               {"indices_are_sorted", kOptional},
               {"unique_indices", kOptional}}};
    case Opcode::kScatter:
      return {3,
              -1,
              {{"update_window_dims", kRequired},
               {"inserted_window_dims", kRequired},
               {"scatter_dims_to_operand_dims", kRequired},
               {"index_vector_dim", kRequired},
               {"input_batching_dims", kOptional},
               {"scatter_indices_batching_dims", kOptional},
               {"indices_are_sorted", kOptional},
               {"unique_indices", kOptional},
               {"to_apply", kRequired}}};
    case Opcode::kReducePrecision:
      return {1, 1, {{"exponent_bits", kRequired}, {"mantissa_bits", kRequired}}};
    case Opcode::kBatchNormTraining:
      return {3, 3, {{"epsilon", kRequired}, {"feature_index", kRequired}}};
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return {5, 5, {{"epsilon", kRequired}, {"feature_index", kRequired}}};
    case Opcode::kRng:
      return {2, 2, {{"distribution", kRequired}}};
    case Opcode::kRngBitGenerator:
      return {1, 1, {{"algorithm", kRequired}}};
    case Opcode::kFusion:
      return {0, -1, {{"kind", kRequired}, {"calls", kRequired}}};
    case Opcode::kCall:
      return {0, -1, {{"to_apply", kRequired}}};
    case Opcode::kWhile:
      return {1, 1, {{"condition", kRequired}, {"body", kRequired}}};
    case Opcode::kConditional:
      return {1,
              -1,
              {{"true_computation", kOptional},
               {"false_computation", kOptional},
               {"branch_computations", kOptional}}};
    case Opcode::kCustomCall:
      return {0,
              -1,
              {{"custom_call_target", kRequired},
               {"custom_call_has_side_effect", kOptional},
               {"called_computations", kOptional},
               {"to_apply", kOptional},
               {"window", kOptional},
               {"dim_labels", kOptional},
               {"feature_group_count", kOptional},
               {"batch_group_count", kOptional}}};
    case Opcode::kAsyncStart:
      return {0, -1, {{"calls", kRequired}}};
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return {1, 1, {{"calls", kOptional}}};
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
      return {1, -1, Join({{"to_apply", kRequired}}, kCollective)};
    case Opcode::kReduceScatter:
      return {1, -1, Join({{"dimensions", kRequired}, {"to_apply", kRequired}}, kCollective)};
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
      return {1, -1, Join({{"dimensions", kRequired}}, kCollective)};
    case Opcode::kAllToAll:
      return {1, -1, Join({{"dimensions", kOptional}}, kCollective)};
    case Opcode::kCollectiveBroadcast:
      return {1, -1, kCollective};
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      return {1, 4, {{"source_target_pairs", kRequired}, {"channel_id", kOptional}}};
    case Opcode::kSend:
      return {2, 2, {{"channel_id", kOptional}}};
    case Opcode::kRecv:
      return {1, 1, {{"channel_id", kOptional}}};
    case Opcode::kInfeed:
      return {1, 1, {}};
    case Opcode::kOutfeed:
      return {2, 2, {}};
    case Opcode::kAfterAll:
    case Opcode::kTuple:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
      return {0, -1, {}};
    default:
      return {0, -1, {}};
  }
}

}  // namespace

const AttributeRule* OpcodeRules::Find(std::string_view name) const {
  for (const AttributeRule& rule : attributes) {
    if (rule.name == name) return &rule;
  }
  return nullptr;
}

const OpcodeRules& RulesFor(ir::Opcode opcode) {
  static const auto* const kTable = [] {
    auto* table = new std::array<OpcodeRules, ir::kOpcodeCount>();
    for (int i = 0; i < ir::kOpcodeCount; ++i) (*table)[i] = MakeRules(static_cast<Opcode>(i));
    return table;
  }();
  return (*kTable)[static_cast<size_t>(opcode)];
}

bool IsCommonAttribute(std::string_view name) {
  return name == "sharding" || name == "metadata" || name == "backend_config" ||
         name == "frontend_attributes" || name == "control-predecessors";
}

bool IsOpaqueAttribute(std::string_view name) {
  static constexpr std::array<std::string_view, 31> kNames = {
      "precision_config",
      "operand_precision",
      "api_version",
      "output_to_operand_aliasing",
      "custom_call_schedule",
      "operand_layout_constraints",
      "parameter_replication",
      "statistics",
      "origin",
      "result_accuracy",
      "algorithm",
      "schedule",
      "sparsity",
      "is_host_transfer",
      "infeed_config",
      "outfeed_config",
      "outfeed_shape",
      "fft_type",
      "fft_length",
      "left_side",
      "lower",
      "unit_diagonal",
      "transpose_a",
      "is_cross_program_prefetch",
      "cross_program_prefetch_index",
      "async_execution_thread",
      "async_group_id",
      "domain",
      "split_dimension",
      "raw_backend_config",
      "padding_type",
  };
  for (std::string_view known : kNames) {
    if (known == name) return true;
  }
  return false;
}

}  // namespace alpa::hlo
