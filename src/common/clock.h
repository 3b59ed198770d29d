#pragma once
// Wall-clock timestamps as the documents and the results file write them.
#include <chrono>
#include <string>

namespace ks {

using WallTime = std::chrono::system_clock::time_point;

// "2026-11-30T12:00:00.123Z"
std::string iso_utc(WallTime t);
inline std::string iso_utc_now() { return iso_utc(std::chrono::system_clock::now()); }

// "1m05s", "2h03m", "12.3s": for progress lines.
std::string human_duration(double seconds);

}  // namespace ks
