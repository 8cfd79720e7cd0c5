// The storage of Literal's arrays: 64-byte aligned blocks, with the large ones cached for reuse.
//
// Why a cache: a training step frees its large buffers and the next step allocates the same
// sizes again. Handed back to the C library, the memory went back to the kernel (glibc trims the
// heaps of threads other than the main one) and was faulted in again on first touch, every step:
// a GPT step on one device thread spent 2.1 s of system time in 8 steps, and ran at 0.41 s a step
// against 0.17 s with the memory kept (bench/pytorch). Blocks of kMinCachedBytes or more are
// therefore kept on release in one process-wide cache and handed out again for requests they fit
// with at most a quarter to spare (best fit); the cache holds at most a quarter of the machine's
// memory, beyond which blocks go back to the C library. A cached block is free, not in use.
#ifndef ALPA_IR_BUFFER_ALLOCATOR_H_
#define ALPA_IR_BUFFER_ALLOCATOR_H_

#include <cstddef>
#include <new>
#include <utility>

namespace alpa::ir {

inline constexpr size_t kMinCachedBytes = size_t{64} << 10;

// A block of at least `bytes` (64-byte aligned; throws std::bad_alloc like operator new).
void* AllocateBuffer(size_t bytes);
// Gives back a block of AllocateBuffer(bytes), with the same `bytes`.
void ReleaseBuffer(void* block, size_t bytes) noexcept;
// Bytes of the free blocks the cache holds.
size_t CachedBufferBytes();

// std::allocator's interface over AllocateBuffer. Value-initialisation (vector::resize) leaves
// the elements uninitialised, which Literal::CreateUninitialized relies on; explicit values
// (vector::assign) are written as usual.
template <typename T>
struct BufferAllocator {
  using value_type = T;
  BufferAllocator() = default;
  template <typename U>
  BufferAllocator(const BufferAllocator<U>&) noexcept {}  // NOLINT: as std::allocator
  T* allocate(size_t n) { return static_cast<T*>(AllocateBuffer(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { ReleaseBuffer(p, n * sizeof(T)); }
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U>
  bool operator==(const BufferAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace alpa::ir

#endif  // ALPA_IR_BUFFER_ALLOCATOR_H_
