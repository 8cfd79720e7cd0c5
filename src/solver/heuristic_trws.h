// Sequential tree-reweighted message passing (TRW-S, Kolmogorov 2006) for the relaxed problem:
// minimise sum_v theta_v(s_v) + sum_(v,w) theta_vw(s_v, s_w) with no memory limit, where
// theta_v = unary + memory penalty (heuristic_search.h).
//
// Local moves cannot switch a cycle of nodes that must agree (a residual block's operands) from
// one sharding to another: every node left out of the move pays the disagreement. Message
// passing reasons about the whole graph at once. With nodes in a fixed order, a forward pass
// visits them in order and, for each node i, sends to each later neighbour j
//
//   m_ij(t) = min_s [ gamma_i * b_i(s) - m_ji(s) + theta_ij(s, t) ],   then shifted to min 0,
//
// where b_i = theta_i + sum of messages into i and gamma_i = 1 / max(#earlier, #later
// neighbours). The backward pass does the same in reverse order. A labelling is decoded in each
// forward pass: s_i = argmin theta_i(s) + sum_{j earlier} theta_ij(s_j, s) + sum_{j later} m_ji(s).
// Messages persist between calls, so a run after the penalties change starts warm.
#ifndef ALPA_SOLVER_HEURISTIC_TRWS_H_
#define ALPA_SOLVER_HEURISTIC_TRWS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "solver/heuristic_problem.h"

namespace alpa::solver {

// The message of one edge from h[s] = gamma_i * b_i(s) - m_ji(s), over the matrix oriented for
// j (row s: i's strategy, over j's kj strategies):
//   to[t] = min_s (h[s] + matrix[s * kj + t]),  then shifted to min 0.
// In plain C++, and on x86-64 four of j's strategies at a time with AVX2 (only where
// CpuHasAvx2(), support/cpu_features.h); Trws takes the AVX2 one where it can. Both give the same
// bits (a test holds them to it).
double TrwsMessage(const double* h, int32_t ki, const double* matrix, int32_t kj, double* to);
#if defined(__x86_64__)
double TrwsMessageAvx2(const double* h, int32_t ki, const double* matrix, int32_t kj, double* to);
#endif

class Trws {
 public:
  explicit Trws(const HeuristicProblem& problem);

  // Runs `iterations` forward + backward passes with theta_v = unary + penalty (per local
  // strategy), fewer when `stop` says so between two, and returns the labelling decoded in the
  // last forward pass.
  std::vector<int32_t> Run(const std::vector<int64_t>& penalty, int iterations,
                           const std::function<bool()>& stop);

  // A lower bound on min_s sum_v theta_v(s_v) + sum_(v,w) theta_vw(s_v, s_w) from the current
  // messages, over TRW-S's own decomposition into monotonic chains. The messages reparametrise
  // the problem without changing any labelling's value: with b_v(s) = theta_v(s) + sum_w m_wv(s)
  // and theta'_vw(s, t) = theta_vw(s, t) - m_wv(s) - m_vw(t), E(s) = sum_v b_v + sum theta'_vw.
  // At node v the edges to earlier neighbours (chains arriving) are paired in adjacency order with
  // those to later ones (chains leaving); an unpaired one ends or starts a chain there. Node v
  // lies on n_v = max(#earlier, #later) chains (one without edges), each taking b_v / n_v, so E
  // is the sum of the chains' energies and the sum of their minima (a dynamic program along each
  // chain) bounds min E. It is the decomposition TRW-S's gamma_v = 1 / n_v is made for (Kolmogorov
  // 2006); on a path ordered along itself it is the optimum. Valid for any messages; every
  // operation rounds toward -infinity, each monotone in what it computes, so the result is at most
  // the exact one and needs no margin.
  double LowerBound(const std::vector<int64_t>& penalty) const;

 private:
  int32_t k(int32_t v) const { return problem_.num_strategies(v); }
  // One pass with theta_v = theta_; `forward` decodes into labelling_.
  void Pass(bool forward);

  const HeuristicProblem& problem_;
  // problem_.matrices converted to double once: every message reads them, and converting int64
  // to double in the inner loop is scalar on CPUs without AVX-512 (and kept the loop from
  // vectorising anywhere).
  std::vector<double> matrices_;
  std::vector<int64_t> message_offset_;  // per adjacency entry a of v: m_{w->v}, k(v) values
  std::vector<double> messages_;
  std::vector<double> gamma_;
  std::vector<int32_t> labelling_;
  std::vector<double> theta_;  // unary + penalty of Run's call, per local strategy
  std::vector<double> belief_, out_, h_;
};

}  // namespace alpa::solver

#endif  // ALPA_SOLVER_HEURISTIC_TRWS_H_
