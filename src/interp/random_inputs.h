// Deterministic inputs for evaluating a program without real data, and a fingerprint of results.
#ifndef ALPA_INTERP_RANDOM_INPUTS_H_
#define ALPA_INTERP_RANDOM_INPUTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/literal.h"
#include "ir/shape.h"

namespace alpa::interp {

// Values for `shape` that depend only on (shape, seed), on every machine:
//   floats (f16, bf16, f32, f64): uniform in [-1, 1), rounded to the type
//   complex: real and imaginary parts each uniform in [-1, 1)
//   integers: uniform in [0, 8), so that they are valid indices into small dimensions
//   pred: true or false with equal odds
// Tuples are filled element by element with derived seeds; tokens and other types are zeros.
ir::Literal RandomLiteral(const ir::Shape& shape, uint64_t seed);

// One RandomLiteral per parameter of `computation`, parameter i seeded from (seed, i).
std::vector<ir::Literal> RandomArguments(const ir::Computation& computation, uint64_t seed);

// A reproducible fingerprint of a value, printed by `alpa eval`:
//   count    number of array elements over all tuple leaves
//   sum      sum of the element values in f64 (complex: real plus imaginary parts), leaves in
//            order, elements in row-major order; NaN if any element is NaN
//   abs_sum  sum of |value| (complex: |re| + |im|), likewise
//   hash     FNV-1a (64 bit) over each leaf's shape text and raw bytes: any bit change shows
// sum and abs_sum let two runs that differ in rounding be compared with a tolerance; hash says
// whether they are bit-identical.
struct Checksum {
  int64_t count = 0;
  double sum = 0.0;
  double abs_sum = 0.0;
  uint64_t hash = 0;

  // `count=6 sum=1.5 abs_sum=4.25 hash=0123456789abcdef` (sums with 17 significant digits).
  std::string ToString() const;
};
Checksum ComputeChecksum(const ir::Literal& literal);

}  // namespace alpa::interp

#endif  // ALPA_INTERP_RANDOM_INPUTS_H_
