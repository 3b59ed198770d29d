#pragma once
// The series of one point: its median in each run of a history, lined up in the history's order,
// and the table that lines them up as the files are read one after another.
#include <cstddef>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "history/file_medians.h"

namespace ks::history {

struct PointSeries {
  SeriesIdentity identity;
  nlohmann::json params;           // identity.params_json, parsed
  std::vector<double> medians_ns;  // one per run, in order; NaN where the run did not measure it, or it did not pass
};

// The series of every point kept, filled one run at a time: each point's medians are 8 bytes a run,
// its identity is held once.
class SeriesTable {
 public:
  // Whether a point is kept (--where): asked once, the first time it is met.
  using Keep = std::function<bool(const SeriesIdentity& identity, const nlohmann::json& params)>;
  SeriesTable(std::size_t runs, Keep keep);

  // The medians of the run read `run`-th (each run once, in any order).
  void add(std::size_t run, std::vector<PointMedian> medians);

  // The series, in the order their points were first met, each run's median moved to its position:
  // order[k] is the run (as added) at position k.
  std::vector<PointSeries> take(const std::vector<std::size_t>& order);

 private:
  std::size_t runs_;
  Keep keep_;
  std::vector<PointSeries> series_;
  std::unordered_map<std::string, std::ptrdiff_t> place_;  // SeriesIdentity::key() -> index in series_, -1 left out
};

}  // namespace ks::history
