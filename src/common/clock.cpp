#include "common/clock.h"

#include <ctime>

#include <fmt/format.h>

namespace ks {

std::string iso_utc(WallTime t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                     utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(ms % 1000));
}

std::string human_duration(double seconds) {
  if (!(seconds >= 0)) return "?";
  if (seconds < 60) return fmt::format("{:.1f}s", seconds);
  const auto whole = static_cast<long long>(seconds + 0.5);
  if (whole < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  return fmt::format("{}h{:02}m", whole / 3600, (whole % 3600) / 60);
}

}  // namespace ks
