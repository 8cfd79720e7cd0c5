// Typed attributes of HLO instructions, as plain data.
//
// Every instruction carries one `Attributes`; an opcode reads the fields its HLO text form has
// (the field comments name the HLO attribute). Fields that nothing in this project interprets yet
// (sharding, metadata, backend_config, ...) are kept as text so that HLO round-trips unchanged.
#ifndef ALPA_IR_ATTRIBUTES_H_
#define ALPA_IR_ATTRIBUTES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/literal.h"

namespace alpa::ir {

// dot: lhs_batch_dims, rhs_batch_dims, lhs_contracting_dims, rhs_contracting_dims.
struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch_dims;
  std::vector<int64_t> rhs_batch_dims;
  std::vector<int64_t> lhs_contracting_dims;
  std::vector<int64_t> rhs_contracting_dims;
  bool operator==(const DotDimensionNumbers&) const = default;
};

// One dimension of `slice={[start:limit:stride], ...}`.
struct SliceDim {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceDim&) const = default;
};

// One dimension of `padding=low_high_interior x ...`. low/high may be negative (cropping).
struct PaddingDim {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PaddingDim&) const = default;
};

// One dimension of `window={size=.. stride=.. pad=lo_hi lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}`.
struct WindowDim {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t pad_low = 0;
  int64_t pad_high = 0;
  int64_t lhs_dilation = 1;  // "base dilation" in reduce-window
  int64_t rhs_dilation = 1;  // "window dilation" in reduce-window
  bool reversal = false;
  bool operator==(const WindowDim&) const = default;
};

// `dim_labels=b01f_01io->b01f`: position of each logical dimension in each operand.
struct ConvolutionDimensionNumbers {
  int64_t input_batch = 0;
  int64_t input_feature = 1;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0;
  int64_t kernel_output_feature = 1;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0;
  int64_t output_feature = 1;
  std::vector<int64_t> output_spatial;
  bool operator==(const ConvolutionDimensionNumbers&) const = default;
};

// gather: offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim,
// operand_batching_dims, start_indices_batching_dims; plus slice_sizes in Attributes.
struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  bool operator==(const GatherDimensionNumbers&) const = default;
};

// scatter: update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
// index_vector_dim, input_batching_dims, scatter_indices_batching_dims.
struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

enum class ComparisonDirection { kEq, kNe, kLt, kLe, kGt, kGe };
// `type=` on compare; kDefault means the attribute was absent (the element type decides).
enum class ComparisonType { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };

// `replica_groups={{0,1},{2,3}}` or the iota form `[2,4]<=[4,2]T(1,0)`. `groups` is always the
// expanded list; `iota` remembers the compact form so the printer writes what it read.
struct IotaReplicaGroups {
  std::vector<int64_t> group_dims;      // [num_groups, group_size]
  std::vector<int64_t> reshape_dims;    // <=[...]
  std::vector<int64_t> transpose_perm;  // T(...), empty when absent
  bool operator==(const IotaReplicaGroups&) const = default;
};
struct ReplicaGroups {
  std::vector<std::vector<int64_t>> groups;
  std::optional<IotaReplicaGroups> iota;
  bool operator==(const ReplicaGroups&) const = default;
};

// `rng` distribution.
enum class RandomDistribution { kUniform, kNormal };

// `fusion` kind.
enum class FusionKind { kLoop, kInput, kOutput, kCustom };

struct Attributes {
  // parameter(N)
  int64_t parameter_number = -1;
  // constant(literal)
  std::optional<Literal> literal;
  // get-tuple-element: index=N
  int64_t tuple_index = -1;
  // iota: iota_dimension=N
  int64_t iota_dimension = -1;
  // dimensions={...}: broadcast, transpose, reduce, reverse, concatenate, sort, all-gather,
  // reduce-scatter, all-to-all (split dimension)
  std::vector<int64_t> dimensions;
  // slice={[a:b:c], ...}
  std::vector<SliceDim> slice;
  // dynamic-slice: dynamic_slice_sizes={...}; gather: slice_sizes={...}
  std::vector<int64_t> slice_sizes;
  // pad: padding=...
  std::vector<PaddingDim> padding;
  // convolution, reduce-window, select-and-scatter: window={...}
  std::vector<WindowDim> window;
  std::optional<ConvolutionDimensionNumbers> conv_dims;  // dim_labels=
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  std::optional<DotDimensionNumbers> dot_dims;
  std::optional<GatherDimensionNumbers> gather_dims;
  std::optional<ScatterDimensionNumbers> scatter_dims;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  // compare
  ComparisonDirection comparison_direction = ComparisonDirection::kEq;
  ComparisonType comparison_type = ComparisonType::kDefault;
  // sort
  bool is_stable = false;
  // topk
  int64_t k = 0;
  bool largest = true;
  // rng: distribution=rng_uniform|rng_normal; rng-bit-generator: algorithm=rng_default|...
  RandomDistribution distribution = RandomDistribution::kUniform;
  std::string rng_algorithm;
  // reduce-precision
  int64_t exponent_bits = 0;
  int64_t mantissa_bits = 0;
  // batch-norm-*
  double epsilon = 0.0;
  int64_t feature_index = -1;
  // fusion
  FusionKind fusion_kind = FusionKind::kLoop;
  // Collectives.
  std::optional<ReplicaGroups> replica_groups;
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;
  std::optional<int64_t> channel_id;
  bool use_global_device_ids = false;
  bool constrain_layout = false;
  // custom-call
  std::string custom_call_target;
  bool custom_call_has_side_effect = false;

  // Kept as text, not interpreted yet (each is the value exactly as it follows `name=`).
  std::string sharding;               // `{devices=[2,1]0,1}`; parsed by the sharding layer
  std::string backend_config;         // `"..."` or a raw JSON object
  std::vector<std::pair<std::string, std::string>> metadata;  // op_name -> "\"jit(f)/dot\""
  std::vector<std::pair<std::string, std::string>> frontend_attributes;  // key -> unquoted value
  // Other attributes XLA defines that carry no semantics here (precision_config, api_version,
  // output_to_operand_aliasing, ...), in the order they were read: name -> raw text.
  std::vector<std::pair<std::string, std::string>> opaque;
};

std::string_view ComparisonDirectionName(ComparisonDirection direction);  // "LT"
std::optional<ComparisonDirection> ParseComparisonDirection(std::string_view text);
std::string_view ComparisonTypeName(ComparisonType type);  // "TOTALORDER"; "" for kDefault
std::optional<ComparisonType> ParseComparisonType(std::string_view text);
std::string_view FusionKindName(FusionKind kind);  // "kLoop"
std::optional<FusionKind> ParseFusionKind(std::string_view text);

// The value of metadata field `key` (op_type, op_name, source_file, ...) without quotes, or ""
// when absent.
std::string MetadataField(const Attributes& attributes, std::string_view key);

// Op name used in error messages and in `metadata` lookups: MetadataField(op_name).
std::string MetadataOpName(const Attributes& attributes);

}  // namespace alpa::ir

#endif  // ALPA_IR_ATTRIBUTES_H_
