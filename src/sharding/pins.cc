#include "sharding/pins.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "sharding/hlo_sharding.h"
#include "support/file.h"
#include "support/json_text.h"

namespace alpa::sharding {
namespace {

// The array leaves of `shape` in ir::Shape's leaf order (depth first).
void CollectLeaves(const ir::Shape& shape, std::vector<const ir::Shape*>& leaves) {
  if (!shape.IsTuple()) {
    leaves.push_back(&shape);
    return;
  }
  for (const ir::Shape& element : shape.tuple_shapes()) CollectLeaves(element, leaves);
}

Result<ShardingSpec> LeafSpec(const HloSharding& sharding, const ir::Shape& leaf,
                              const std::vector<int64_t>& mesh_shape) {
  const std::vector<int64_t> dims = leaf.IsArray() ? leaf.dims() : std::vector<int64_t>{};
  ALPA_ASSIGN_OR_RETURN(ShardingSpec spec,
                        FromHloSharding(sharding, mesh_shape, static_cast<int64_t>(dims.size())));
  ALPA_RETURN_IF_ERROR(CheckSpec(spec, mesh_shape, dims)
                           .WithContext(fmt::format("does not fit shape {}", leaf.ToString())));
  return spec;
}

// One spec per leaf of `shape`: a tuple sharding element by element (XLA's tuple shardings list
// the leaves, flattened), any other sharding for every leaf.
Result<LeafSpecs> SpecsForShape(const HloSharding& sharding, const ir::Shape& shape,
                                const std::vector<int64_t>& mesh_shape) {
  std::vector<const ir::Shape*> leaves;
  CollectLeaves(shape, leaves);
  if (sharding.kind == HloSharding::Kind::kTuple && sharding.elements.size() != leaves.size()) {
    return InvalidArgument("a tuple sharding of {} elements for a value of {} leaves ({})",
                           sharding.elements.size(), leaves.size(), shape.ToString());
  }
  LeafSpecs specs;
  for (size_t k = 0; k < leaves.size(); ++k) {
    const HloSharding& element =
        sharding.kind == HloSharding::Kind::kTuple ? sharding.elements[k] : sharding;
    ALPA_ASSIGN_OR_RETURN(ShardingSpec spec, LeafSpec(element, *leaves[k], mesh_shape));
    specs.push_back(std::move(spec));
  }
  return specs;
}

// A get-tuple-element of a tuple (through any nesting) is the tuple's operand: a view.
const ir::Instruction* Resolve(const ir::Instruction* value) {
  while (value->opcode() == ir::Opcode::kGetTupleElement) {
    const ir::Instruction* tuple = Resolve(value->operand(0));
    if (tuple->opcode() != ir::Opcode::kTuple) break;
    value = tuple->operand(value->attributes().tuple_index);
  }
  return value;
}

std::string SpecsText(const LeafSpecs& specs) {
  std::vector<std::string> parts;
  for (const ShardingSpec& spec : specs) parts.push_back(ToString(spec));
  return fmt::format("{}", fmt::join(parts, " "));
}

// Collects pins, pushing those on tuple views down to the producers and remembering which key
// pinned each producer for the message when two disagree.
class PinCollector {
 public:
  Status Pin(const ir::Instruction& value, const LeafSpecs& specs, const std::string& key) {
    const ir::Instruction* producer = Resolve(&value);
    if (producer->opcode() == ir::Opcode::kTuple) {
      size_t first = 0;
      for (const ir::Instruction* operand : producer->operands()) {
        const size_t count = static_cast<size_t>(operand->shape().LeafCount());
        ALPA_RETURN_IF_ERROR(
            Pin(*operand, LeafSpecs(specs.begin() + first, specs.begin() + first + count), key));
        first += count;
      }
      return Status::Ok();
    }
    auto [it, inserted] = pins_.emplace(producer->name(), specs);
    if (inserted) {
      pinned_by_[producer->name()] = key;
    } else if (it->second != specs) {
      return InvalidArgument("pins %{} ({}) and %{} ({}) both lay out %{}, differently",
                             pinned_by_[producer->name()], SpecsText(it->second), key,
                             SpecsText(specs), producer->name());
    }
    return Status::Ok();
  }

  Pins Take() { return std::move(pins_); }

 private:
  Pins pins_;
  std::map<std::string, std::string> pinned_by_;
};

}  // namespace

Result<Pins> PinsFromShardingsText(std::string_view text, const std::string& source,
                                   const ir::Computation& entry,
                                   const std::vector<int64_t>& mesh_shape) {
  ALPA_ASSIGN_OR_RETURN(Json json, ParseJsonText(text, source));
  if (!json.is_object()) {
    return InvalidArgument(
        "{}: expected a JSON object from instruction name to XLA sharding text, e.g. "
        "{{\"x\": \"{{devices=[4,1]<=[4]}}\"}}",
        source);
  }
  PinCollector pins;
  const ir::InstructionIndex by_name(entry);
  for (const auto& [name, value] : json.items()) {
    // A copy: clang before 16 cannot capture a structured binding (the fuzz build uses clang).
    const std::string& key = name;
    const auto fail = [&](const Status& why) {
      return why.WithContext(fmt::format("{}: key '{}'", source, key));
    };
    if (!value.is_string()) {
      return fail(
          InvalidArgument("expected a string of XLA sharding text, found {}", value.dump()));
    }
    const ir::Instruction* instruction = by_name.Find(name);
    if (instruction == nullptr) {
      return fail(
          NotFound("no instruction of that name in the entry computation %{}", entry.name()));
    }
    Result<HloSharding> sharding = ParseHloSharding(value.get<std::string>());
    if (!sharding.ok()) return fail(sharding.status());
    Result<LeafSpecs> specs = SpecsForShape(*sharding, instruction->shape(), mesh_shape);
    if (!specs.ok()) return fail(specs.status());
    ALPA_RETURN_IF_ERROR(pins.Pin(*instruction, *specs, name).WithContext(source));
  }
  return pins.Take();
}

Result<Pins> ReadShardingsFile(const std::string& path, const ir::Computation& entry,
                               const std::vector<int64_t>& mesh_shape) {
  ALPA_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return PinsFromShardingsText(text, path, entry, mesh_shape);
}

Result<Pins> PinsFromHloShardings(const ir::Computation& entry,
                                  const std::vector<int64_t>& mesh_shape) {
  PinCollector pins;
  for (const ir::Instruction* instruction : entry.MakePostOrder()) {
    const std::string& text = instruction->attributes().sharding;
    if (text.empty()) continue;
    const auto fail = [&](const Status& why) {
      const ir::SourceLocation& at = instruction->location();
      return why.WithContext(
          fmt::format("%{}{} sharding={}", instruction->name(),
                      at.known() ? fmt::format(" (line {})", at.line) : std::string(), text));
    };
    Result<HloSharding> sharding = ParseHloSharding(text);
    if (!sharding.ok()) return fail(sharding.status());
    Result<LeafSpecs> specs = SpecsForShape(*sharding, instruction->shape(), mesh_shape);
    if (!specs.ok()) {
      const Status why = fail(specs.status());
      return Status(why.code(), why.message() +
                                    "; --ignore-hlo-shardings plans without the "
                                    "HLO's shardings");
    }
    ALPA_RETURN_IF_ERROR(pins.Pin(*instruction, *specs, instruction->name()));
  }
  return pins.Take();
}

void MergePins(Pins& pins, const Pins& lower) {
  for (const auto& [name, specs] : lower) pins.emplace(name, specs);
}

}  // namespace alpa::sharding
