#pragma once
// A history as the commands that read one ask for it (`history`, `report --history`): the results
// files read in the order asked, the series --where keeps, and each series' steps found under the
// rule (--min-change). One way to read the options, so that both commands take the same values.
#include <memory>
#include <string>
#include <vector>

#include "history/history.h"
#include "history/step_detection.h"
#include "report/commands.h"
#include "report/history_output.h"

namespace ks {

// The history and its points, each with its steps. Held where it is made: `report.history` and each
// point's series point into `history`.
struct JudgedHistory {
  history::History history;
  HistoryReport report;  // its points in the order sort_for_reading gives them
};

// Reads and judges the history `query` names. Throws history::HistoryInputError, one line naming
// the file or the option at fault (a results file that cannot be read, a --where that does not parse,
// a --min-change below 0 among them).
std::unique_ptr<JudgedHistory> judge_history(const HistoryQuery& query);

}  // namespace ks
