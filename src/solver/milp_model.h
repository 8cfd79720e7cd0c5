// The auto-sharding problem (request.h) as a mixed-integer linear program: Alpa's formulation
// (Zheng et al., OSDI 2022, Eq. 1; the ILP of XLA's auto_sharding_solver.cc), built as plain data
// so that milp_solver.cc only hands it to CBC and tests can inspect it.
//
// Variables (one column each; forbidden choices get no column):
//   s[v,i] in {0,1}   node v takes strategy i
//   e[uv,ij] in [0,1] the edge (u, v) sees s(u) = i and s(v) = j (continuous: it is integral
//                     whenever the s are, by the constraints below)
//   U[k] >= 0         the memory in use at the k-th constrained time (continuous, see below)
// Objective:
//   min  sum_(v,i) c[v][i] s[v,i] + sum_(uv,ij) r[uv][i][j] e[uv,ij]   (+ a constant, `offset`)
// Constraints:
//   (one-hot)   sum_i s[v,i] = 1                                        per node
//   (marginals) sum_j e[uv,ij] = s[u,i]  for each i;  sum_i e[uv,ij] = s[v,j]  for each j
//   (memory)    sum_(v live at t) sum_i m[v][i] s[v,i] <= L             at selected times t
//
// Presolve, each step exact (the optimum and the feasible set are unchanged):
//   - a strategy or edge entry at kForbiddenCost or more is removed;
//   - parallel edges between the same two nodes are merged (their matrices summed);
//   - arc consistency: a strategy i of u with no allowed entry (i, j) on some edge (u, v) for an
//     allowed j is removed, until nothing changes; a node left with no strategy proves the problem
//     infeasible;
//   - a node left with one strategy is fixed: its edges fold into the other end's costs (or into
//     the offset when both ends are fixed), its cost and usage become constants;
//   - an edge whose allowed entries are all zero and allow every pair is dropped.
//
// Memory. The live set L(t) only changes at interval starts and ends. Between two consecutive
// end times E' < E, L(E-1) contains L(t) for every t in [E'-1, E-1) unless nothing started in
// [E', E-1], in which case L(E-1) is contained in L(E'-1). So the constraint is needed only at
// t = E-1 for end times E with a start in [E', E-1] (the maximal live sets), and not there either
// when the live nodes' largest usages already fit: sum_v max_i m[v][i] <= L. The smallest usage
// of each live node is a constant moved to the right-hand side (as XLA does), leaving the extra
// usage w[v] = sum_i (m[v][i] - min_i m[v][i]) s[v,i]. Writing each constrained time's
// sum_(v in L(t)) w[v] out in full takes |L(t)| terms per row: 220 million nonzeros on the
// contest's instance A. Instead the rows form a chain over the constrained times t_1 < t_2 < ...:
//   U[1] = sum_(v in L(t_1)) w[v],  U[k] = U[k-1] + sum_(v arrived) w[v] - sum_(v left) w[v],
//   0 <= U[k] <= L - sum_(v in L(t_k)) min_i m[v][i],
// where "arrived" and "left" compare L(t_k) with L(t_(k-1)): each node enters at most two rows.
// The projection onto s is the same polytope, so the LP bound is unchanged. If the smallest
// usages alone exceed L at some time, the problem is infeasible.
#ifndef ALPA_SOLVER_MILP_MODEL_H_
#define ALPA_SOLVER_MILP_MODEL_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "solver/request.h"

namespace alpa::solver {

struct MilpModel {
  enum class Kind { kStrategy, kEdge, kUsage };
  // What a column stands for: s[node, i]; e[(node, edge_to), (i, j)]; or U[k], whose defining
  // chain row is row `i`.
  struct Column {
    Kind kind = Kind::kStrategy;
    int64_t node = -1;
    int64_t i = 0;
    int64_t edge_to = -1;
    int64_t j = 0;
  };
  std::vector<Column> columns;
  std::vector<double> objective;  // per column
  std::vector<double> upper;      // per column; every lower bound is 0
  std::vector<char> integer;      // per column: 1 for s, 0 for e and U

  // Rows, all equalities (sum of entries = rhs), in compressed sparse row form: row r has
  // entries [row_start[r], row_start[r + 1]).
  std::vector<int64_t> row_start{0};
  std::vector<int> row_column;
  std::vector<double> row_value;
  std::vector<double> row_rhs;
  int64_t memory_rows = 0;  // the chain rows, one per constrained time

  TotalCost offset = 0;  // the cost of the fixed parts
  // Per node: its strategy when the presolve fixed it, else -1.
  std::vector<int64_t> fixed;

  // Set when the presolve proved that no feasible choice exists; `why` says where.
  bool infeasible = false;
  std::string why;

  int64_t num_rows() const { return static_cast<int64_t>(row_rhs.size()); }
  int64_t num_columns() const { return static_cast<int64_t>(columns.size()); }
};

// The number of s and e columns BuildMilpModel would create, counted after the presolve without
// building anything (a fraction of the time); 0 when the presolve proves the problem infeasible
// or fixes every node.
int64_t CountMilpColumns(const Request& request);

// Builds the model of a valid request.
MilpModel BuildMilpModel(const Request& request);

// The column values of `choice` (a warm start); empty when the choice uses a strategy or edge
// entry that the presolve removed (it is then forbidden or cannot be feasible). The U are the
// choice's memory use, above their upper bounds when it does not fit.
std::vector<double> ModelValues(const MilpModel& model, std::span<const int64_t> choice);

// The choice that the column values select: for each free node the strategy whose s is largest.
std::vector<int64_t> ChoiceFromValues(const MilpModel& model, std::span<const double> values);

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_MILP_MODEL_H_
