#pragma once
// A history: many results files of one sweep (each a run: a night's, a commit's), put in order, and
// the series of every point across them (docs/history.md). The files are read one after another,
// each for its points' medians only (history/file_medians.h): what is held is one file's medians
// and the series, 8 bytes a point a run. What the series say is history/step_detection.h's.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "history/point_series.h"
#include "history/run_order.h"
#include "view/filter.h"

namespace ks::history {

struct History {
  RunOrder order;
  std::vector<HistoryRun> runs;     // in order
  std::vector<PointSeries> series;  // each with one median per run, in the order their points were first met
};

// The history of the results files `arguments` names (files, folders of them), in `order`, of the
// points `filter` keeps. Throws HistoryInputError and ResultsFileError, naming the file.
History read_history(const std::vector<std::string>& arguments, const RunOrder& order, const RowFilter& filter);

// Whether `filter` keeps a series: its keys are kernel, implementation, mode, point (a prefix of the
// point id), device and the point's parameters.
bool series_matches(const RowFilter& filter, const SeriesIdentity& identity, const nlohmann::json& params);

}  // namespace ks::history
