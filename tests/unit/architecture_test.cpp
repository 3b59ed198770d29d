// The layout that docs/architecture.md states, held against the code: its floors table read from the
// page itself (so the page and the check cannot drift apart), then every include of src/ and kernels/
// checked against it, and the walls around MPI and HDF5.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace ks::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = KS_SOURCE_DIR;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// docs/architecture.md's floors table: "| 6 | `cluster`, `kernelindex`, `view` |" rows, folder to floor.
std::map<std::string, int> floors_of_page() {
  static const std::regex row(R"re(^\|\s*(\d+)\s*\|\s*(`[a-z_]+`(?:\s*,\s*`[a-z_]+`)*)\s*\|\s*$)re");
  static const std::regex folder("`([a-z_]+)`");
  std::map<std::string, int> floors;
  std::istringstream lines(read_text(kRoot / "docs/architecture.md"));
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    const int floor = std::stoi(m[1]);
    const std::string folders = m[2];
    for (std::sregex_iterator it(folders.begin(), folders.end(), folder), end; it != end; ++it)
      floors[(*it)[1]] = floor;
  }
  return floors;
}

struct SourceFile {
  fs::path path;    // relative to the source tree
  std::string top;  // its folder: "kernels", or the folder under src/
};

std::vector<SourceFile> source_files() {
  std::vector<SourceFile> files;
  for (const char* tree : {"src", "kernels"}) {
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / tree)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".cu" && ext != ".cuh")) continue;
      const fs::path relative = fs::relative(entry.path(), kRoot);
      auto part = relative.begin();
      const std::string first = (part++)->string();
      files.push_back({relative, first == "kernels" ? first : part->string()});
    }
  }
  return files;
}

// Each line of `text` that matches `pattern`, as "path:line: text".
std::vector<std::string> lines_matching(const SourceFile& file, const std::regex& pattern) {
  std::vector<std::string> out;
  std::istringstream lines(read_text(kRoot / file.path));
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (std::regex_search(line, pattern)) out.push_back(fmt::format("{}:{}: {}", file.path.string(), number, line));
  }
  return out;
}

TEST(Architecture, ThePageNamesAFloorForEveryFolder) {
  const std::map<std::string, int> floors = floors_of_page();
  ASSERT_FALSE(floors.empty()) << "docs/architecture.md has no floors table";
  EXPECT_EQ(floors.count("kernels"), 1u);
  for (const auto& entry : fs::directory_iterator(kRoot / "src"))
    if (entry.is_directory())
      EXPECT_EQ(floors.count(entry.path().filename().string()), 1u)
          << "src/" << entry.path().filename().string() << " has no floor in docs/architecture.md";
}

TEST(Architecture, NoIncludeRunsUpTheFloors) {
  const std::map<std::string, int> floors = floors_of_page();
  static const std::regex include(R"re(^\s*#\s*include\s*"([a-z_]+)/)re");
  std::vector<std::string> upward;
  for (const SourceFile& file : source_files()) {
    const auto own = floors.find(file.top);
    if (own == floors.end()) continue;  // ThePageNamesAFloorForEveryFolder says so
    std::istringstream lines(read_text(kRoot / file.path));
    int number = 0;
    for (std::string line; std::getline(lines, line);) {
      ++number;
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const auto target = floors.find(m[1]);
      if (target != floors.end() && target->second > own->second)
        upward.push_back(fmt::format("{}:{}: {} (floor {}) includes {} (floor {})", file.path.string(), number,
                                     file.top, own->second, target->first, target->second));
    }
  }
  EXPECT_TRUE(upward.empty()) << fmt::format("includes that run up the floors:\n{}", fmt::join(upward, "\n"));
}

// The messaging layer of src/cluster (the world, the typed messages between ranks, the gangs'
// communicators), and the collectives being measured: gang.cpp's timing protocol and kernels/nccl/.
bool may_call_mpi(const std::string& path) {
  for (const char* allowed : {"src/cluster/mpi_world.", "src/cluster/messaging.", "src/cluster/gang_communicators.",
                              "src/cluster/gang.cpp", "kernels/nccl/"})
    if (path.rfind(allowed, 0) == 0) return true;
  return false;
}

TEST(Architecture, MpiIsCalledInTheMessagingLayerAndTheMeasuredCollectivesOnly) {
  static const std::regex mpi_call(R"re(\bMPI_[A-Z][A-Za-z_]*\s*\(|#\s*include\s*<mpi\.h>)re");
  std::vector<std::string> outside;
  for (const SourceFile& file : source_files()) {
    if (may_call_mpi(file.path.string())) continue;
    for (std::string& line : lines_matching(file, mpi_call)) outside.push_back(std::move(line));
  }
  EXPECT_TRUE(outside.empty()) << fmt::format("MPI outside the messaging layer:\n{}", fmt::join(outside, "\n"));
}

TEST(Architecture, Hdf5IsCalledInTheStoreOnly) {
  static const std::regex hdf5_call(R"re(\bH5[A-Z][A-Za-z_]*\s*\(|#\s*include\s*<hdf5\.h>)re");
  std::vector<std::string> outside;
  for (const SourceFile& file : source_files()) {
    if (file.path.string().rfind("src/store/", 0) == 0) continue;
    for (std::string& line : lines_matching(file, hdf5_call)) outside.push_back(std::move(line));
  }
  EXPECT_TRUE(outside.empty()) << fmt::format("HDF5 outside src/store/:\n{}", fmt::join(outside, "\n"));
}

// One concept a file: an implementation file and its header together stay readable in one sitting.
constexpr std::size_t kMaxLinesWithHeader = 600;

std::size_t lines_in(const fs::path& path) {
  std::ifstream in(path);
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

TEST(Architecture, NoSourceFileIsOver600LinesWithItsHeader) {
  std::vector<std::string> long_files;
  for (const SourceFile& file : source_files()) {
    const fs::path full = kRoot / file.path;
    const std::string ext = full.extension().string();
    const fs::path header = fs::path(full).replace_extension(".h");
    std::size_t lines = lines_in(full);
    if (ext == ".h" || ext == ".cuh") {
      // A header with an implementation file is counted with it; one without is counted alone.
      bool has_implementation = false;
      for (const char* source : {".cpp", ".cu"})
        has_implementation |= fs::exists(fs::path(full).replace_extension(source));
      if (has_implementation) continue;
    } else if (fs::exists(header)) {
      lines += lines_in(header);
    }
    if (lines > kMaxLinesWithHeader) long_files.push_back(fmt::format("{}: {} lines", file.path.string(), lines));
  }
  EXPECT_TRUE(long_files.empty()) << fmt::format("over {} lines with their headers:\n{}", kMaxLinesWithHeader,
                                                 fmt::join(long_files, "\n"));
}

// A build without CUDA registers a .cu file's implementations from its KS_IMPLEMENTATION lines
// (cmake/cuda_stubs.cmake), which it reads one line at a time: each must be whole on its line.
TEST(Architecture, EveryCudaImplementationIsRegisteredOnOneLine) {
  static const std::regex registration(R"re(^KS_IMPLEMENTATION\()re");
  static const std::regex whole(R"re(^KS_IMPLEMENTATION\(.*\)[ {]*$)re");
  std::vector<std::string> split;
  for (const char* tree : {"kernels", "examples", "tests"}) {
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / tree)) {
      if (entry.path().extension() != ".cu") continue;
      std::istringstream lines(read_text(entry.path()));
      int number = 0;
      for (std::string line; std::getline(lines, line);) {
        ++number;
        if (std::regex_search(line, registration) && !std::regex_match(line, whole))
          split.push_back(fmt::format("{}:{}: {}", fs::relative(entry.path(), kRoot).string(), number, line));
      }
    }
  }
  EXPECT_TRUE(split.empty()) << fmt::format("registrations split over lines:\n{}", fmt::join(split, "\n"));
}

}  // namespace
}  // namespace ks::testing
