#include <filesystem>
#include <fstream>
#include <string>

#include "measure/do_bench.h"

namespace ks {
namespace {

constexpr std::int64_t kUnknownCacheBytes = 32LL << 20;

// sysfs writes sizes as "48K", "2048K", "32M"; 0 when the text is not a size.
std::int64_t parse_cache_size(const std::string& text) {
  std::size_t digits = 0;
  std::int64_t value = 0;
  try {
    value = std::stoll(text, &digits);
  } catch (const std::exception&) { return 0; }
  const char unit = digits < text.size() ? text[digits] : ' ';
  if (unit == 'K') return value << 10;
  if (unit == 'M') return value << 20;
  if (unit == 'G') return value << 30;
  return value;
}

std::string read_word(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string word;
  in >> word;
  return word;
}

// The data or unified cache of the highest level that cpu0 reports (its size is per cache, which
// is what a flush must cover).
std::int64_t read_last_level_cache_bytes() {
  const std::filesystem::path caches = "/sys/devices/system/cpu/cpu0/cache";
  std::error_code error;
  int best_level = 0;
  std::int64_t best_bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(caches, error)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    if (read_word(entry.path() / "type") == "Instruction") continue;
    const int level = std::atoi(read_word(entry.path() / "level").c_str());
    const std::int64_t bytes = parse_cache_size(read_word(entry.path() / "size"));
    if (bytes > 0 && (level > best_level || (level == best_level && bytes > best_bytes))) {
      best_level = level;
      best_bytes = bytes;
    }
  }
  return best_bytes > 0 ? best_bytes : kUnknownCacheBytes;
}

}  // namespace

std::int64_t cpu_last_level_cache_bytes() {
  static const std::int64_t bytes = read_last_level_cache_bytes();
  return bytes;
}

}  // namespace ks
