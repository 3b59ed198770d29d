// Large arrays in transparent huge pages (common/huge_pages.h): aligned on 2 MiB, their contents kept
// as they grow, and the kernel asked for huge pages where it gives them.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>

#include "common/huge_pages.h"

namespace ks {
namespace {

constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;

std::uintptr_t address_of(const void* memory) { return reinterpret_cast<std::uintptr_t>(memory); }

// The value of `field` (e.g. "THPeligible") in /proc/self/smaps for the mapping that holds `address`.
std::optional<long> smaps_field(std::uintptr_t address, const std::string& field) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t start = 0, end = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> start >> dash >> end && dash == '-') {  // a mapping's first line
      inside = start <= address && address < end;
      continue;
    }
    if (inside && line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return std::nullopt;
}

TEST(HugePages, ALargeVectorLiesOnHugePageBoundariesAndKeepsItsContentsAsItGrows) {
  LargeVector<std::uint64_t> values(std::size_t{1} << 19);  // 4 MiB
  std::iota(values.begin(), values.end(), std::uint64_t{0});
  EXPECT_EQ(address_of(values.data()) % kHugePage, 0u);
  for (std::uint64_t i = values.size(); i < (std::uint64_t{3} << 19); ++i) values.push_back(i);  // moved twice
  EXPECT_EQ(address_of(values.data()) % kHugePage, 0u);
  for (std::uint64_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], i);
  values.shrink_to_fit();
  EXPECT_EQ(values.back(), (std::uint64_t{3} << 19) - 1);
}

TEST(HugePages, ASmallVectorWorksAsAnyOther) {
  LargeVector<int> small{3, 1, 2};
  small.push_back(4);
  EXPECT_EQ(std::accumulate(small.begin(), small.end(), 0), 10);
}

TEST(HugePages, TheKernelIsAskedForHugePagesWhereItGivesThem) {
  std::ifstream modes("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(modes, mode);
  if (mode.empty() || mode.find("[never]") != std::string::npos)
    GTEST_SKIP() << "transparent huge pages are off on this machine";
  LargeVector<char> bytes(std::size_t{4} << 20, 'x');
  const auto eligible = smaps_field(address_of(bytes.data()), "THPeligible");
  ASSERT_TRUE(eligible.has_value()) << "no THPeligible line for the array's mapping in /proc/self/smaps";
  EXPECT_EQ(*eligible, 1) << "THP mode: " << mode;
}

}  // namespace
}  // namespace ks
