#include "runtime/placed_buffers.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "support/status.h"

namespace alpa::runtime {
namespace {

void Fill(ir::DType dtype, int64_t elements, void* data) {
  switch (dtype) {
    case ir::DType::kF32:
      std::fill_n(static_cast<float*>(data), elements, 0.5f);
      break;
    case ir::DType::kF64:
      std::fill_n(static_cast<double*>(data), elements, 0.5);
      break;
    case ir::DType::kF16:
      std::fill_n(static_cast<uint16_t*>(data), elements, uint16_t{0x3800});  // 0.5
      break;
    case ir::DType::kBF16:
      std::fill_n(static_cast<uint16_t*>(data), elements, uint16_t{0x3F00});  // 0.5
      break;
    default:
      std::memset(data, 0, static_cast<size_t>(elements * ir::DTypeByteSize(dtype)));
      break;
  }
}

}  // namespace

PlacedBuffers::PlacedBuffers(std::vector<Spec> specs, int64_t placements)
    : specs_(std::move(specs)) {
  ALPA_CHECK(placements >= 1, "placements must be at least 1, found {}", placements);
  for (int64_t p = 0; p < placements; ++p) sets_.push_back(MapSet());
}

void PlacedBuffers::Unmap::operator()(void* data) const {
  munmap(data, static_cast<size_t>(bytes));
}

std::vector<PlacedBuffers::Mapping> PlacedBuffers::MapSet() const {
  std::vector<Mapping> set;
  for (const Spec& spec : specs_) {
    // mmap takes no zero length; a one-byte mapping stands for an empty buffer.
    const int64_t bytes = std::max<int64_t>(1, spec.elements * ir::DTypeByteSize(spec.dtype));
    void* data = mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ALPA_CHECK(data != MAP_FAILED, "mapping {} bytes for a profiled buffer failed: {}", bytes,
               std::strerror(errno));
    Fill(spec.dtype, spec.elements, data);
    set.emplace_back(data, Unmap{bytes});
  }
  return set;
}

}  // namespace alpa::runtime
