#pragma once
// Arrays of millions of entries (a plan's keys, a results file's) in transparent huge pages.
//
// Such an array is written once, from its first element to its last, and the kernel takes a page
// fault at each of its 4 KiB pages. Under a hypervisor a fault costs microseconds: on the 2-core
// VM of bench/results, 64 MB took 270-470 ms to write the first time in 4 KiB pages and 5-9 ms in
// 2 MiB pages, and a resume of a million points spent a third of its time faulting pages in.
// Allocations of 2 MiB and more are therefore mapped on 2 MiB boundaries and advised MADV_HUGEPAGE,
// which the kernel honours where transparent huge pages are `always` or `madvise` (Debian's default)
// and ignores where they are off; smaller ones come from operator new.
#include <cstddef>
#include <new>
#include <vector>

namespace ks {

void* allocate_large(std::size_t bytes);
void release_large(void* memory, std::size_t bytes) noexcept;

template <class T> class HugePageAllocator {
 public:
  using value_type = T;

  HugePageAllocator() = default;
  template <class U> HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(std::size_t count) {
    if (count > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(allocate_large(count * sizeof(T)));
  }
  void deallocate(T* memory, std::size_t count) noexcept { release_large(memory, count * sizeof(T)); }

  template <class U> bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
};

// A vector whose storage, once it reaches 2 MiB, lies in huge pages.
template <class T> using LargeVector = std::vector<T, HugePageAllocator<T>>;

// For a process that makes and frees many objects at a high rate (a view of 100,000 points, rank 0's
// store taking in records of raw samples): glibc's heap grown in 64 MiB steps and never trimmed while
// the process runs, allocations below 64 MiB kept off mmap. By default the heap grows by 128 KiB
// steps, gives freed memory back, and maps each allocation above 128 KiB afresh: a system call and
// page faults (microseconds each under a hypervisor) every time. Once per process; later calls do
// nothing.
void grow_the_heap_in_large_steps();

}  // namespace ks
