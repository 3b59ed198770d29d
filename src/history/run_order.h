#pragma once
// The runs of a history and their order. Each results file is one run of the sweep (one night's, one
// commit's); the files are given one by one or as folders of them, and lined up (docs/history.md):
//
//   given       the order of the arguments; the files of a folder by their time
//   time        every file by its time
//   label:KEY   by the value of the label KEY (numbers by value, before text), then by time
//
// A run's time is when it ran: the start of the sweep (root attribute started_at); for a file
// imported from another tool, when that tool measured its earliest result (its rows' ended_at),
// since the import itself may come long after. Files of equal time keep the order of their paths.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/run_labels.h"

namespace ks::history {

// Input that cannot make a history (a path that is not there, a folder without results files, an
// order that cannot be read, a file without the label the order asks for): one line, naming it.
struct HistoryInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RunOrder {
  enum class By { given, time, label };
  By by = By::given;
  std::string label;  // the KEY of label:KEY
  std::string text() const;
};
// "given", "time" or "label:KEY"; throws HistoryInputError.
RunOrder parse_run_order(const std::string& text);

// One results file of a history.
struct HistoryRun {
  std::string file;          // as given, or as found in a folder given
  std::size_t argument = 0;  // which argument named it (itself or its folder)
  std::string time;          // when it ran (above): UTC, ISO 8601
  RunLabels labels;
  // How the run is named where a step begins: its labels, or its time where it has none.
  std::string name() const;
};

// The results files the arguments name: a file as it is (whatever its name), a folder's files ending
// in .h5 at any depth below it, in path order. Throws HistoryInputError for a path that does not
// exist and for a folder that holds no .h5 file.
std::vector<HistoryRun> history_files(const std::vector<std::string>& arguments);

// The positions of `runs` in `order`: out[k] is the index in `runs` of the k-th run. Throws
// HistoryInputError, naming the file, where label:KEY is asked of a file without that label.
std::vector<std::size_t> run_order(const std::vector<HistoryRun>& runs, const RunOrder& order);

}  // namespace ks::history
