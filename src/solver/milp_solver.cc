#include "solver/milp_solver.h"

#include <Cbc_C_Interface.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "solver/checker.h"
#include "solver/milp_model.h"
#include "support/child_process.h"

namespace alpa::solver {
namespace {

using Clock = std::chrono::steady_clock;

// Integers up to 2^53 are exact in a double: below it CBC's proofs hold for the exact costs.
constexpr TotalCost kExactInDouble = TotalCost{1} << 53;

// How long past its own limit CBC may run before it is killed: it usually stops itself at the
// limit (and its incumbent is kept) and is killed only when a step that does not read the clock
// (its first LP, the start's evaluation) outlasts the limit.
constexpr double kCbcGraceSeconds = 0.5;

double SecondsSince(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

struct CbcDeleter {
  void operator()(Cbc_Model* model) const { Cbc_deleteModel(model); }
};
using CbcModelPtr = std::unique_ptr<Cbc_Model, CbcDeleter>;

// Loads the model into CBC: CBC takes the matrix by columns, the model has it by rows.
CbcModelPtr LoadIntoCbc(const MilpModel& model) {
  const int num_columns = static_cast<int>(model.num_columns());
  const int num_rows = static_cast<int>(model.num_rows());
  std::vector<CoinBigIndex> start(num_columns + 1, 0);
  for (int column : model.row_column) ++start[column + 1];
  for (int c = 0; c < num_columns; ++c) start[c + 1] += start[c];
  std::vector<int> index(model.row_column.size());
  std::vector<double> value(model.row_column.size());
  std::vector<CoinBigIndex> next(start.begin(), start.end() - 1);
  for (int r = 0; r < num_rows; ++r) {
    for (int64_t k = model.row_start[r]; k < model.row_start[r + 1]; ++k) {
      const CoinBigIndex at = next[model.row_column[k]]++;
      index[at] = r;
      value[at] = model.row_value[k];
    }
  }
  const std::vector<double> lower(num_columns, 0.0);
  CbcModelPtr cbc(Cbc_newModel());
  Cbc_loadProblem(cbc.get(), num_columns, num_rows, start.data(), index.data(), value.data(),
                  lower.data(), model.upper.data(), model.objective.data(), model.row_rhs.data(),
                  model.row_rhs.data());
  for (int c = 0; c < num_columns; ++c) {
    if (model.integer[c]) Cbc_setInteger(cbc.get(), c);
  }
  return cbc;
}

// A proven lower bound on the (integral) optimum from CBC's bound on the objective, a double:
// rounded up after a tolerance for the rounding of large objectives.
std::optional<TotalCost> IntegralBound(double bound, TotalCost offset) {
  if (!std::isfinite(bound) || bound < -1e300) return std::nullopt;
  const double tolerance = 1e-6 + std::fabs(bound) * 1e-12;
  const TotalCost rounded = static_cast<TotalCost>(std::ceil(bound - tolerance));
  return std::max<TotalCost>(0, offset + rounded);
}

// The answer for `choice` when the checker accepts it.
std::optional<Answer> Verified(const Request& request, const std::vector<int64_t>& choice) {
  Result<Evaluation> evaluation = EvaluateChoice(request, choice);
  ALPA_CHECK(evaluation.ok(), "the MILP produced a malformed choice: {}",
             evaluation.status().message());
  if (!evaluation->feasible()) return std::nullopt;
  Answer answer;
  answer.status = SolveStatus::kFeasible;
  answer.choice = choice;
  answer.cost = evaluation->cost;
  return answer;
}

// What CBC ended with, as plain data that can cross a process boundary.
struct CbcOutcome {
  bool proven_infeasible = false;
  bool proven_optimal = false;
  double best_possible = -std::numeric_limits<double>::infinity();  // CBC's bound
  std::vector<double> values;  // the best solution's column values; empty without one
};

// A CbcOutcome as bytes: the two flags, the bound and the values, in this machine's layout (the
// bytes never leave the machine).
std::string Serialize(const CbcOutcome& outcome) {
  std::string bytes(2 + sizeof(double) * (1 + outcome.values.size()), '\0');
  bytes[0] = outcome.proven_infeasible;
  bytes[1] = outcome.proven_optimal;
  std::memcpy(bytes.data() + 2, &outcome.best_possible, sizeof(double));
  std::memcpy(bytes.data() + 2 + sizeof(double), outcome.values.data(),
              sizeof(double) * outcome.values.size());
  return bytes;
}

std::optional<CbcOutcome> Deserialize(const std::string& bytes, size_t num_columns) {
  const size_t with_values = 2 + sizeof(double) * (1 + num_columns);
  if (bytes.size() != with_values && bytes.size() != 2 + sizeof(double)) return std::nullopt;
  CbcOutcome outcome;
  outcome.proven_infeasible = bytes[0] != 0;
  outcome.proven_optimal = bytes[1] != 0;
  std::memcpy(&outcome.best_possible, bytes.data() + 2, sizeof(double));
  if (bytes.size() == with_values) {
    outcome.values.resize(num_columns);
    std::memcpy(outcome.values.data(), bytes.data() + 2 + sizeof(double),
                sizeof(double) * num_columns);
  }
  return outcome;
}

// Runs CBC on the model until `seconds` have passed (or it is within options.relative_gap), from
// `start` (column values, may be empty).
CbcOutcome RunCbc(const MilpModel& model, const std::vector<double>& start,
                  const SolveOptions& options, double seconds) {
  CbcModelPtr cbc = LoadIntoCbc(model);
  Cbc_setLogLevel(cbc.get(), options.milp_log ? 1 : 0);
  if (options.relative_gap > 0) Cbc_setAllowableFractionGap(cbc.get(), options.relative_gap);
  Cbc_setParameter(cbc.get(), "timeMode", "elapsed");
  Cbc_setMaximumSeconds(cbc.get(), seconds);
  if (!start.empty()) {
    // From a good start CBC's preprocessing (with the start's cost as cutoff) cost more than it
    // gave on the contest's instances B and G: with it off, CBC proved the heuristic's solutions
    // optimal (or improved them to optimal) 1.5 to 4 times sooner.
    Cbc_setParameter(cbc.get(), "preprocess", "off");
    std::vector<int> columns(start.size());
    for (size_t c = 0; c < start.size(); ++c) columns[c] = static_cast<int>(c);
    Cbc_setMIPStartI(cbc.get(), static_cast<int>(start.size()), columns.data(), start.data());
  }
  Cbc_solve(cbc.get());
  CbcOutcome outcome;
  outcome.proven_infeasible = Cbc_isProvenInfeasible(cbc.get());
  if (outcome.proven_infeasible) return outcome;
  outcome.proven_optimal = Cbc_isProvenOptimal(cbc.get());
  outcome.best_possible = Cbc_getBestPossibleObjValue(cbc.get());
  if (const double* values = Cbc_bestSolution(cbc.get()); values != nullptr) {
    outcome.values.assign(values, values + model.columns.size());
  }
  return outcome;
}

// RunCbc in a child process killed kCbcGraceSeconds after `seconds` (CBC reads its clock only
// between its own steps: its first LP can outlast any limit); in this process when no child can
// be started. nullopt when CBC did not end in time (or died).
std::optional<CbcOutcome> RunCbcWithinLimit(const MilpModel& model,
                                            const std::vector<double>& start,
                                            const SolveOptions& options, double seconds) {
  Result<ChildOutcome> child =
      RunInChildProcess([&] { return Serialize(RunCbc(model, start, options, seconds)); },
                        seconds + kCbcGraceSeconds);
  if (!child.ok()) return RunCbc(model, start, options, seconds);
  if (child->ending != ChildOutcome::Ending::kFinished) return std::nullopt;
  return Deserialize(child->output, model.columns.size());
}

// Fills `answer` from CBC's outcome: its best verified solution (when it has one), its bound and
// whether it proved optimality or infeasibility. `start_cost` is the cost of CBC's start, if any.
void ReadOutcome(const Request& request, const MilpModel& model, const CbcOutcome& outcome,
                 std::optional<TotalCost> start_cost, Answer& answer) {
  if (outcome.proven_infeasible) {
    // From a start, CBC searches below its cost (the cutoff) only: "infeasible" then proves the
    // start optimal, while the objective is exact in a double.
    if (!start_cost.has_value()) {
      answer.status = SolveStatus::kInfeasible;
    } else if (*start_cost < kExactInDouble) {
      answer.lower_bound = *start_cost;
    }
    return;
  }
  answer.lower_bound = IntegralBound(outcome.best_possible, model.offset);
  if (outcome.values.empty()) return;
  std::optional<Answer> found = Verified(request, ChoiceFromValues(model, outcome.values));
  if (!found.has_value()) return;
  answer.status = found->status;
  answer.choice = std::move(found->choice);
  answer.cost = found->cost;
  // Optimality in doubles is optimality of the integers while the objective is exact in a double.
  if (outcome.proven_optimal && answer.cost < kExactInDouble) {
    answer.status = SolveStatus::kOptimal;
    answer.lower_bound = answer.cost;
  }
}

}  // namespace

Result<Answer> SolveMilp(const Request& request, const SolveOptions& options) {
  const Clock::time_point begin = Clock::now();
  std::optional<Answer> start;
  if (!options.start.empty()) {
    Result<Evaluation> evaluation = EvaluateChoice(request, options.start);
    if (!evaluation.ok()) return evaluation.status().WithContext("the start");
    start = Verified(request, options.start);
  }
  const MilpModel model = BuildMilpModel(request);
  Answer answer;
  if (model.infeasible) {
    answer.status = SolveStatus::kInfeasible;
  } else if (model.num_columns() == 0) {
    // The presolve fixed every node: the fixed choice is the only candidate.
    std::optional<Answer> fixed = Verified(request, model.fixed);
    if (fixed.has_value()) {
      answer = std::move(*fixed);
      answer.status = SolveStatus::kOptimal;
      answer.lower_bound = answer.cost;
    } else {
      answer.status = SolveStatus::kInfeasible;
    }
  } else if (const double left = options.time_limit_s - SecondsSince(begin); left > 0) {
    const std::vector<double> values =
        start.has_value() ? ModelValues(model, start->choice) : std::vector<double>();
    const std::optional<CbcOutcome> outcome = RunCbcWithinLimit(model, values, options, left);
    if (outcome.has_value()) {
      ReadOutcome(request, model, *outcome,
                  start.has_value() ? std::optional(start->cost) : std::nullopt, answer);
    }
  }
  answer.solver = "cbc";
  answer.seconds = SecondsSince(begin);
  const bool solved = answer.has_solution();
  if (start.has_value() && (!solved || start->cost < answer.cost)) {
    // CBC found nothing better than the start (or nothing the checker accepts).
    const std::optional<TotalCost> bound = answer.lower_bound;
    answer.status = SolveStatus::kFeasible;
    answer.choice = std::move(start->choice);
    answer.cost = start->cost;
    answer.lower_bound = bound;
  } else if (solved && options.on_improvement &&
             (!start.has_value() || answer.cost < start->cost)) {
    options.on_improvement(answer.seconds, answer.cost);
  }
  // A bound at the cost proves optimality (a bound above it only comes from CBC's rounding).
  if (answer.status == SolveStatus::kFeasible && answer.lower_bound.has_value() &&
      *answer.lower_bound >= answer.cost) {
    answer.status = SolveStatus::kOptimal;
    answer.lower_bound = answer.cost;
  }
  return answer;
}

}  // namespace alpa::solver
