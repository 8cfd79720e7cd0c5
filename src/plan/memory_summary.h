// A memory model (cost/memory_model.h) as people and scripts read it: the breakdown at the peak
// by category, where the peak is, and the whole step's figures. `alpa inspect --memory` prints
// them for one device running a whole module; a plan document's estimate carries PeakJson, which
// `alpa explain` and the Python package show with PeakLine.
#ifndef ALPA_PLAN_MEMORY_SUMMARY_H_
#define ALPA_PLAN_MEMORY_SUMMARY_H_

#include <nlohmann/json.hpp>
#include <string>

#include "cost/memory_model.h"

namespace alpa::plan {

// The breakdown at the peak and the whole-step figures: text lines for people, the "memory"
// object for --json.
std::string MemoryText(const cost::MemoryModel& memory);
nlohmann::ordered_json MemoryJson(const cost::MemoryModel& memory);

// Where the peak is, for a plan document's estimate and `alpa explain`: its pass, its
// instruction and what is live there by category ({"pass", "instruction", "at_peak"}, the
// categories keyed as in MemoryJson), and the
// same as one line ("in the backward pass, at %dot.3: temporaries 1.2 MiB (40%), ...", largest
// first, empty categories left out).
nlohmann::ordered_json PeakJson(const cost::MemoryModel& memory);
std::string PeakLine(const nlohmann::ordered_json& peak);

}  // namespace alpa::plan

#endif  // ALPA_PLAN_MEMORY_SUMMARY_H_
