#include "structural_equal.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace alpa::hlo::testing {
namespace {

// Every field of Attributes, written out independently of the printer under test.
std::string Dump(const ir::Attributes& a) {
  std::string out = fmt::format("param={} index={} iota={} dims={} slice_sizes={} fgc={} bgc={} ",
                                a.parameter_number, a.tuple_index, a.iota_dimension,
                                a.dimensions, a.slice_sizes, a.feature_group_count,
                                a.batch_group_count);
  if (a.literal.has_value()) {
    out += fmt::format("literal={}{} ", a.literal->shape().ToString(),
                       a.literal->is_elided() ? "elided" : a.literal->ToString());
  }
  for (const auto& s : a.slice) out += fmt::format("slice[{}:{}:{}] ", s.start, s.limit, s.stride);
  for (const auto& p : a.padding) out += fmt::format("pad[{}_{}_{}] ", p.low, p.high, p.interior);
  for (const auto& w : a.window) {
    out += fmt::format("win[{} {} {} {} {} {} {}] ", w.size, w.stride, w.pad_low, w.pad_high,
                       w.lhs_dilation, w.rhs_dilation, w.reversal);
  }
  if (a.conv_dims) {
    const auto& c = *a.conv_dims;
    out += fmt::format("conv[{} {} {} {} {} {} {} {} {}] ", c.input_batch, c.input_feature,
                       c.input_spatial, c.kernel_input_feature, c.kernel_output_feature,
                       c.kernel_spatial, c.output_batch, c.output_feature, c.output_spatial);
  }
  if (a.dot_dims) {
    const auto& d = *a.dot_dims;
    out += fmt::format("dot[{} {} {} {}] ", d.lhs_batch_dims, d.rhs_batch_dims,
                       d.lhs_contracting_dims, d.rhs_contracting_dims);
  }
  if (a.gather_dims) {
    const auto& g = *a.gather_dims;
    out += fmt::format("gather[{} {} {} {} {} {}] ", g.offset_dims, g.collapsed_slice_dims,
                       g.start_index_map, g.index_vector_dim, g.operand_batching_dims,
                       g.start_indices_batching_dims);
  }
  if (a.scatter_dims) {
    const auto& s = *a.scatter_dims;
    out += fmt::format("scatter[{} {} {} {} {} {}] ", s.update_window_dims, s.inserted_window_dims,
                       s.scatter_dims_to_operand_dims, s.index_vector_dim, s.input_batching_dims,
                       s.scatter_indices_batching_dims);
  }
  out += fmt::format("sorted={} unique={} dir={} type={} stable={} k={} largest={} dist={} alg={} "
                     "bits={},{} eps={} fi={} kind={} ",
                     a.indices_are_sorted, a.unique_indices,
                     ir::ComparisonDirectionName(a.comparison_direction),
                     ir::ComparisonTypeName(a.comparison_type), a.is_stable, a.k, a.largest,
                     static_cast<int>(a.distribution), a.rng_algorithm, a.exponent_bits,
                     a.mantissa_bits, a.epsilon, a.feature_index,
                     ir::FusionKindName(a.fusion_kind));
  if (a.replica_groups) {
    out += fmt::format("groups={} ", a.replica_groups->groups);
    if (a.replica_groups->iota) {
      const auto& i = *a.replica_groups->iota;
      out += fmt::format("iota={} {} {} ", i.group_dims, i.reshape_dims, i.transpose_perm);
    }
  }
  out += fmt::format("pairs={} channel={} global={} constrain={} target={} side_effect={} ",
                     a.source_target_pairs, a.channel_id.value_or(-1), a.use_global_device_ids,
                     a.constrain_layout, a.custom_call_target, a.custom_call_has_side_effect);
  out += fmt::format("sharding={} backend={} metadata={} frontend={} opaque={}", a.sharding,
                     a.backend_config, a.metadata, a.frontend_attributes, a.opaque);
  return out;
}

template <typename T>
std::vector<std::string> Names(const std::vector<T*>& items) {
  std::vector<std::string> names;
  for (const T* item : items) names.push_back(item != nullptr ? item->name() : "<null>");
  return names;
}

}  // namespace

std::string StructuralDifference(const ir::Module& a, const ir::Module& b) {
  if (a.name() != b.name()) return fmt::format("module name {} vs {}", a.name(), b.name());
  const ir::ModuleConfig& ca = a.config();
  const ir::ModuleConfig& cb = b.config();
  if (ca.entry_computation_layout != cb.entry_computation_layout || ca.is_scheduled != cb.is_scheduled ||
      ca.num_partitions != cb.num_partitions || ca.replica_count != cb.replica_count ||
      ca.opaque != cb.opaque) {
    return "module config differs";
  }
  if (a.entry()->name() != b.entry()->name()) return "entry differs";
  if (a.computations().size() != b.computations().size()) return "computation count differs";
  for (const auto& ca_ptr : a.computations()) {
    const ir::Computation& x = *ca_ptr;
    const ir::Computation* y = b.GetComputation(x.name());
    if (y == nullptr) return fmt::format("computation {} missing", x.name());
    if (x.instruction_count() != y->instruction_count()) {
      return fmt::format("{}: instruction count", x.name());
    }
    if (x.root()->name() != y->root()->name()) return fmt::format("{}: root", x.name());
    if (x.execution_thread() != y->execution_thread()) return fmt::format("{}: thread", x.name());
    for (const auto& ix_ptr : x.instructions()) {
      const ir::Instruction& ix = *ix_ptr;
      const ir::Instruction* iy = y->GetInstruction(ix.name());
      const std::string where = fmt::format("{}/{}", x.name(), ix.name());
      if (iy == nullptr) return where + " missing";
      if (ix.opcode() != iy->opcode()) return where + " opcode";
      if (!(ix.shape() == iy->shape())) return where + " shape";
      if (Names(ix.operands()) != Names(iy->operands())) return where + " operands";
      if (Names(ix.called_computations()) != Names(iy->called_computations())) {
        return where + " called computations";
      }
      if (Names(ix.control_predecessors()) != Names(iy->control_predecessors())) {
        return where + " control predecessors";
      }
      std::string dx = Dump(ix.attributes());
      std::string dy = Dump(iy->attributes());
      if (dx != dy) return fmt::format("{} attributes:\n  {}\n  {}", where, dx, dy);
    }
  }
  return "";
}

}  // namespace alpa::hlo::testing
