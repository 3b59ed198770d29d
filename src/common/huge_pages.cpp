#include "common/huge_pages.h"

#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <mutex>

namespace ks {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t mapped_length(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

}  // namespace

void* allocate_large(std::size_t bytes) {
  if (bytes < kHugePage) return ::operator new(bytes);
  const std::size_t length = mapped_length(bytes);
  // Mapped a huge page longer, then trimmed to `length` bytes from a 2 MiB boundary: the kernel puts
  // huge pages only in aligned ranges.
  void* raw = mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t end = start + length + kHugePage;
  if (aligned > start) munmap(raw, aligned - start);
  if (end > aligned + length) munmap(reinterpret_cast<void*>(aligned + length), end - (aligned + length));
  madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE);  // advice only: fine if refused
  return reinterpret_cast<void*>(aligned);
}

void release_large(void* memory, std::size_t bytes) noexcept {
  if (!memory) return;
  if (bytes < kHugePage) return ::operator delete(memory);
  munmap(memory, mapped_length(bytes));
}

void grow_the_heap_in_large_steps() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_TOP_PAD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
  });
}

}  // namespace ks
