#include "cluster/rank_messages.h"

#include <cstdlib>

namespace ks {

std::chrono::steady_clock::duration silence_limit() {
  using Duration = std::chrono::steady_clock::duration;
  static const Duration limit = [] {
    const char* value = std::getenv("KERNELSWEEP_RANK_SILENCE_TIMEOUT");
    const double seconds = value ? std::atof(value) : 0;
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds > 0 ? seconds : 60));
  }();
  return limit;
}

}  // namespace ks
