// Named arrays in the files Python users keep them in:
//
//   .npy           one array (NumPy's format 1.0, 2.0 or 3.0), named after the file's stem
//   .npz           np.savez / np.savez_compressed: a zip archive of .npy members, each named
//                  after its member without ".npy" (libzip reads the archive, stored or deflated)
//   .safetensors   Hugging Face's format: an 8-byte little-endian header length, a JSON header
//                  {"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...}
//                  and the tensors' bytes
//
// No maintained C++ reader of the NumPy format ships with Debian and handles types chosen at run
// time, so the .npy header (a Python dict literal of descr, fortran_order and shape; NEP 1) is
// read here; zip and JSON are left to libzip and nlohmann-json.
//
// Types: f16, f32, f64, bf16 (safetensors), signed and unsigned integers of 8 to 64 bits, bool;
// little-endian and C-ordered. Everything else (big-endian or Fortran-ordered arrays, structured
// or object dtypes, complex numbers, a truncated file) is an error naming the file, the array and
// what to do.
#ifndef ALPA_API_ARRAY_FILE_H_
#define ALPA_API_ARRAY_FILE_H_

#include <string>
#include <vector>

#include "ir/literal.h"
#include "support/status.h"

namespace alpa::api {

struct NamedArray {
  std::string name;
  ir::Literal value;
};

// Whether `path`'s extension is one ReadArrayFile reads.
bool IsArrayFilePath(const std::string& path);

// The arrays of `path`, in the file's order (.safetensors: by name, as its header is a JSON
// object).
Result<std::vector<NamedArray>> ReadArrayFile(const std::string& path);

}  // namespace alpa::api

#endif  // ALPA_API_ARRAY_FILE_H_
