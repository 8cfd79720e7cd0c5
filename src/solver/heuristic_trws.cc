#include "solver/heuristic_trws.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cfenv>
#include <limits>

#include "support/cpu_features.h"

namespace alpa::solver {

double TrwsMessage(const double* h, int32_t ki, const double* matrix, int32_t kj, double* to) {
  std::fill(to, to + kj, std::numeric_limits<double>::infinity());
  for (int32_t s = 0; s < ki; ++s) {
    const double* row = matrix + int64_t{s} * kj;
    for (int32_t t = 0; t < kj; ++t) to[t] = std::min(to[t], h[s] + row[t]);
  }
  const double least = *std::min_element(to, to + kj);
  for (int32_t t = 0; t < kj; ++t) to[t] -= least;
  return least;
}

#if defined(__x86_64__)
// Adding, taking minima and subtracting are exact IEEE operations, done here in the same order
// for every element as in TrwsMessage, so the bits are its bits (no NaN enters: h and the
// matrix are finite).
__attribute__((target("avx2"))) double TrwsMessageAvx2(const double* h, int32_t ki,
                                                       const double* matrix, int32_t kj,
                                                       double* to) {
  const int32_t wide = kj - kj % 4;
  for (int32_t t = 0; t < wide; t += 4) {
    __m256d least = _mm256_set1_pd(std::numeric_limits<double>::infinity());
    for (int32_t s = 0; s < ki; ++s) {
      const __m256d sum =
          _mm256_add_pd(_mm256_set1_pd(h[s]), _mm256_loadu_pd(matrix + int64_t{s} * kj + t));
      least = _mm256_min_pd(sum, least);  // (sum < least) ? sum : least, as std::min
    }
    _mm256_storeu_pd(to + t, least);
  }
  for (int32_t t = wide; t < kj; ++t) {
    double least = std::numeric_limits<double>::infinity();
    for (int32_t s = 0; s < ki; ++s) least = std::min(least, h[s] + matrix[int64_t{s} * kj + t]);
    to[t] = least;
  }
  const double least = *std::min_element(to, to + kj);
  for (int32_t t = 0; t < kj; ++t) to[t] -= least;
  return least;
}
#endif

namespace {

using MessageFunction = double (*)(const double*, int32_t, const double*, int32_t, double*);
#if defined(__x86_64__)
const MessageFunction kMessage = CpuHasAvx2() ? TrwsMessageAvx2 : TrwsMessage;
#else
const MessageFunction kMessage = TrwsMessage;
#endif

}  // namespace

Trws::Trws(const HeuristicProblem& problem)
    : problem_(problem),
      matrices_(problem.matrices.begin(), problem.matrices.end()),
      gamma_(problem.num_nodes, 1.0),
      labelling_(problem.num_nodes, 0) {
  const int64_t entries = problem.adj_begin[problem.num_nodes];
  message_offset_.resize(entries);
  int64_t total = 0;
  for (int32_t v = 0; v < problem.num_nodes; ++v) {
    int64_t earlier = 0, later = 0;
    for (int64_t a = problem.adj_begin[v]; a < problem.adj_begin[v + 1]; ++a) {
      message_offset_[a] = total;
      total += k(v);
      (problem.adj_node[a] < v ? earlier : later) += 1;
    }
    gamma_[v] = 1.0 / static_cast<double>(std::max<int64_t>(1, std::max(earlier, later)));
  }
  messages_.assign(total, 0.0);
}

void Trws::Pass(bool forward) {
  const int32_t n = problem_.num_nodes;
  for (int32_t step = 0; step < n; ++step) {
    const int32_t i = forward ? step : n - 1 - step;
    const int32_t ki = k(i);
    const int64_t base = problem_.strategy_begin[i];
    belief_.assign(theta_.begin() + base, theta_.begin() + base + ki);
    for (int64_t a = problem_.adj_begin[i]; a < problem_.adj_begin[i + 1]; ++a) {
      const double* m = &messages_[message_offset_[a]];
      for (int32_t s = 0; s < ki; ++s) belief_[s] += m[s];
    }
    if (forward) {
      // Decode: earlier neighbours are fixed at their new labels, later ones speak by message.
      out_.assign(theta_.begin() + base, theta_.begin() + base + ki);
      for (int64_t a = problem_.adj_begin[i]; a < problem_.adj_begin[i + 1]; ++a) {
        const int32_t j = problem_.adj_node[a];
        if (j < i) {
          const double* row = &matrices_[problem_.adj_matrix[a] + int64_t{labelling_[j]} * ki];
          for (int32_t s = 0; s < ki; ++s) out_[s] += row[s];
        } else {
          const double* m = &messages_[message_offset_[a]];
          for (int32_t s = 0; s < ki; ++s) out_[s] += m[s];
        }
      }
      labelling_[i] =
          static_cast<int32_t>(std::min_element(out_.begin(), out_.end()) - out_.begin());
    }
    // Messages to the neighbours after i in this pass's order.
    for (int64_t a = problem_.adj_begin[i]; a < problem_.adj_begin[i + 1]; ++a) {
      const int32_t j = problem_.adj_node[a];
      if (forward ? j < i : j > i) continue;
      const int64_t back = problem_.adj_reverse[a];  // j's entry for this edge
      const double* from_j = &messages_[message_offset_[a]];
      h_.resize(ki);
      for (int32_t s = 0; s < ki; ++s) h_[s] = gamma_[i] * belief_[s] - from_j[s];
      // Matrix oriented for j: row s (i's strategy) holds theta_ij(s, t) over t.
      kMessage(h_.data(), ki, &matrices_[problem_.adj_matrix[back]], k(j),
               &messages_[message_offset_[back]]);
    }
  }
}

namespace {

// Rounds every floating-point operation toward -infinity while alive (this file is compiled with
// -frounding-math, so the compiler keeps the operations inside the scope and folds nothing).
class RoundingDownward {
 public:
  RoundingDownward() : saved_(std::fegetround()) { std::fesetround(FE_DOWNWARD); }
  ~RoundingDownward() { std::fesetround(saved_); }
  RoundingDownward(const RoundingDownward&) = delete;
  RoundingDownward& operator=(const RoundingDownward&) = delete;

 private:
  int saved_;
};

}  // namespace

double Trws::LowerBound(const std::vector<int64_t>& penalty) const {
  const RoundingDownward rounding;
  const int32_t n = problem_.num_nodes;
  // prefix, per entry b of v towards a later neighbour: the least cost of the chain leaving v
  // along b so far, per strategy of v (laid out as the messages to v).
  std::vector<double> prefix(messages_.size()), share, arriving, h;
  std::vector<int64_t> earlier, later;
  double bound = 0;
  for (int32_t v = 0; v < n; ++v) {
    const int32_t kv = k(v);
    const int64_t base = problem_.strategy_begin[v];
    earlier.clear();
    later.clear();
    for (int64_t a = problem_.adj_begin[v]; a < problem_.adj_begin[v + 1]; ++a) {
      (problem_.adj_node[a] < v ? earlier : later).push_back(a);
    }
    const size_t chains = std::max<size_t>(1, std::max(earlier.size(), later.size()));
    share.resize(kv);
    for (int32_t s = 0; s < kv; ++s) {
      double belief = static_cast<double>(problem_.unary[base + s] + penalty[base + s]);
      for (int64_t a = problem_.adj_begin[v]; a < problem_.adj_begin[v + 1]; ++a) {
        belief += messages_[message_offset_[a] + s];
      }
      share[s] = belief / static_cast<double>(chains);
    }
    const size_t paired = std::min(earlier.size(), later.size());
    for (size_t e = 0; e < earlier.size(); ++e) {
      // The chain arriving from j: min over j's strategy t of prefix_j(t) + the reparametrised
      // edge theta_jv(t, s) - m_{v->j}(t) - m_{j->v}(s), plus v's share.
      const int64_t a = earlier[e];
      const int64_t back = problem_.adj_reverse[a];  // j's entry for this edge
      const int32_t kj = k(problem_.adj_node[a]);
      h.resize(kj);
      for (int32_t t = 0; t < kj; ++t) {
        h[t] = prefix[message_offset_[back] + t] - messages_[message_offset_[back] + t];
      }
      arriving.resize(kv);
      const double least =
          kMessage(h.data(), kj, &matrices_[problem_.adj_matrix[a]], kv, arriving.data());
      for (int32_t s = 0; s < kv; ++s) {
        arriving[s] = arriving[s] + least - messages_[message_offset_[a] + s] + share[s];
      }
      if (e < paired) {
        std::copy(arriving.begin(), arriving.end(), prefix.begin() + message_offset_[later[e]]);
      } else {
        bound += *std::min_element(arriving.begin(), arriving.end());
      }
    }
    for (size_t e = paired; e < later.size(); ++e) {
      std::copy(share.begin(), share.end(), prefix.begin() + message_offset_[later[e]]);
    }
    if (earlier.empty() && later.empty()) bound += *std::min_element(share.begin(), share.end());
  }
  return bound;
}

std::vector<int32_t> Trws::Run(const std::vector<int64_t>& penalty, int iterations,
                               const std::function<bool()>& stop) {
  theta_.resize(penalty.size());
  for (size_t x = 0; x < penalty.size(); ++x) {
    theta_[x] = static_cast<double>(problem_.unary[x] + penalty[x]);
  }
  for (int it = 0; it < iterations && (it == 0 || !stop()); ++it) {
    Pass(/*forward=*/true);
    Pass(/*forward=*/false);
  }
  return labelling_;
}

}  // namespace alpa::solver
