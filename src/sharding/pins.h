// Manual pins: layouts the user fixes, turned into AutoShardingOptions::pinned_outputs on a
// logical mesh. Two sources:
//
//   a shardings file   a JSON object from instruction name to XLA sharding text,
//                        {"x": "{devices=[4,1]<=[4]}", "w1": "{replicated}",
//                         "out": "{{replicated}, {devices=[1,4]<=[4]}}"}
//                      naming instructions of the entry computation; a tuple sharding gives one
//                      element per leaf of a tuple-shaped value.
//   imported HLO       the `sharding={...}` attribute of the entry's instructions (JAX's
//                      with_sharding_constraint, jit's in/out shardings, GSPMD annotations).
//
// Device ids in the text are the mesh positions 0..n-1 in row-major order (hlo_sharding.h), so
// the text must be expressible on the mesh being planned: FromHloSharding's rules.
//
// A pin on a tuple (or on a get-tuple-element of one) lands on the instructions producing its
// elements, the nodes the solver decides; two pins reaching one instruction must agree. When
// pins are combined (MergePins) the earlier source wins: the plan command takes the shardings
// file first, then the HLO's annotations, then the parallel method's rules.
#ifndef ALPA_SHARDING_PINS_H_
#define ALPA_SHARDING_PINS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/computation.h"
#include "sharding/strategy.h"
#include "support/status.h"

namespace alpa::sharding {

using Pins = std::map<std::string, LeafSpecs>;

// Pins from the text of a shardings file (`source` names it in messages). Errors give
// "SOURCE: key 'NAME': why": malformed JSON (with line:column), a value that is not a string, an
// instruction the entry computation lacks, text that does not parse (with its column), a sharding
// not expressible on the mesh or not fitting the value's shape, two keys pinning one producer
// differently.
Result<Pins> PinsFromShardingsText(std::string_view text, const std::string& source,
                                   const ir::Computation& entry,
                                   const std::vector<int64_t>& mesh_shape);

// The same from a file (plain or .gz).
Result<Pins> ReadShardingsFile(const std::string& path, const ir::Computation& entry,
                               const std::vector<int64_t>& mesh_shape);

// Pins from the entry's `sharding=` attributes. Errors name the instruction and its line, and
// suggest --ignore-hlo-shardings (a {maximal} or {manual} sharding has no layout on the mesh).
Result<Pins> PinsFromHloShardings(const ir::Computation& entry,
                                  const std::vector<int64_t>& mesh_shape);

// Adds to `pins` the entries of `lower` for instructions it does not pin yet.
void MergePins(Pins& pins, const Pins& lower);

}  // namespace alpa::sharding

#endif  // ALPA_SHARDING_PINS_H_
