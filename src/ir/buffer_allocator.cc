#include "ir/buffer_allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <unordered_map>

namespace alpa::ir {
namespace {

constexpr std::align_val_t kAlignment{64};
constexpr size_t kPage = 4096;
constexpr size_t kHugePage = size_t{2} << 20;

size_t RoundUp(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

// Blocks of a huge page or more are aligned to one and offered to the kernel's transparent huge
// pages (where it is in madvise mode): their first touch then faults in 2 MiB at a time. On the
// development VM a first touch of 1 GiB took 3.3 s in 4 KiB pages and 1.9 s in huge pages, and a
// large GPT's first step faults in gigabytes.
std::align_val_t AlignmentOf(size_t capacity) {
  return capacity >= kHugePage ? std::align_val_t{kHugePage} : kAlignment;
}

void* NewBlock(size_t capacity) {
  void* block = ::operator new(capacity, AlignmentOf(capacity));
  if (capacity >= kHugePage) madvise(block, capacity, MADV_HUGEPAGE);  // advice: failure is fine
  return block;
}

// Free large blocks by capacity, and the capacity of each large block in use. A request takes
// the smallest free block that fits it with at most a quarter to spare (best fit), so that blocks
// of nearby sizes serve each other and the cache stays near the program's own peak.
class BufferCache {
 public:
  BufferCache() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_size > 0) {
      limit_ = static_cast<size_t>(pages) * static_cast<size_t>(page_size) / 4;
    }
  }

  void* Allocate(size_t bytes) {
    const size_t wanted = RoundUp(bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    auto fit = free_.lower_bound(wanted);
    if (fit != free_.end() && fit->first <= wanted + wanted / 4) {
      void* block = fit->second;
      in_use_[block] = fit->first;
      cached_ -= fit->first;
      free_.erase(fit);
      return block;
    }
    void* block = NewBlock(wanted);
    in_use_[block] = wanted;
    return block;
  }

  void Release(void* block) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = in_use_.find(block);
    const size_t capacity = it->second;
    in_use_.erase(it);
    if (cached_ + capacity > limit_) {
      ::operator delete(block, AlignmentOf(capacity));
      return;
    }
    free_.emplace(capacity, block);
    cached_ += capacity;
  }

  size_t cached() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cached_;
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;
  std::unordered_map<void*, size_t> in_use_;
  size_t cached_ = 0;
  size_t limit_ = 0;
};

// Never destroyed: Literals with static storage may be released after main returns.
BufferCache& Cache() {
  static BufferCache* cache = new BufferCache();
  return *cache;
}

}  // namespace

void* AllocateBuffer(size_t bytes) {
  if (bytes < kMinCachedBytes) return ::operator new(bytes, kAlignment);
  return Cache().Allocate(bytes);
}

void ReleaseBuffer(void* block, size_t bytes) noexcept {
  if (block == nullptr) return;
  if (bytes < kMinCachedBytes) {
    ::operator delete(block, kAlignment);
  } else {
    Cache().Release(block);
  }
}

size_t CachedBufferBytes() { return Cache().cached(); }

}  // namespace alpa::ir
