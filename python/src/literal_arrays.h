// NumPy arrays in and out of the runtime's values (ir::Literal).
//
// In: an argument is checked against the parameter it is for (its dimensions and element type,
// named in the error) and its bytes copied once into the runtime's aligned buffer. Out: a result
// is handed to NumPy without a copy; the array owns the literal through a capsule.
//
// NumPy has no bfloat16 of its own (ml_dtypes adds one that the buffer protocol cannot describe),
// so bf16 crosses as uint16 with the same bits: the Python side views it back.
#ifndef ALPA_PYTHON_LITERAL_ARRAYS_H_
#define ALPA_PYTHON_LITERAL_ARRAYS_H_

#include <nanobind/ndarray.h>

#include <string_view>

#include "ir/literal.h"
#include "ir/shape.h"

namespace alpa::python {

using HostArray = nanobind::ndarray<nanobind::ro, nanobind::c_contig, nanobind::device::cpu>;
using NumpyArray = nanobind::ndarray<nanobind::numpy>;

// `array` as a value of `shape`. Raises ValueError naming `what` when its dimensions or element
// type differ.
ir::Literal LiteralFromArray(const HostArray& array, const ir::Shape& shape, std::string_view what);

// `literal` (an array) as a NumPy array that owns it.
NumpyArray ArrayFromLiteral(ir::Literal literal);

}  // namespace alpa::python

#endif  // ALPA_PYTHON_LITERAL_ARRAYS_H_
