#pragma once
// The offline commands: from results files to tables, merged files, reports, regression verdicts,
// and other tools' results imported. Each prints what it has to say and returns the exit code
// (run/run.h: kExitOk, kExitFailure, kExitBadInput). None needs MPI or a GPU.
#include <string>
#include <vector>

namespace ks {

class Registry;

// `kernelsweep show FILE.h5...`: the current view as a table (parameters as columns, median and
// p20–p80, TFLOP/s or GB/s, memory, status, message).
struct ShowRequest {
  std::vector<std::string> files;
  std::string where;                 // --where EXPR (view/filter.h)
  std::vector<std::string> columns;  // --columns: the columns to print, in order; empty: the default set
  std::string format = "table";      // table, md, csv, json
};
int show_results(const ShowRequest& request);

// `kernelsweep merge A.h5 B.h5 ... -o ALL.h5`: one results file from shards, array tasks or resumed
// jobs of one sweep.
struct MergeRequest {
  std::vector<std::string> inputs;
  std::string output;
  bool overwrite = false;
  std::vector<std::string> plugins;  // --plugin: loaded before the sweep is re-planned (its plan_size)
};
int merge_results(const MergeRequest& request);  // the built-in kernels only
// The sweep is re-planned with the kernels of `registry` (and the plugins the request names).
int merge_results(const MergeRequest& request, Registry& registry);

// How a history is read (`history`, `report --history`): the same options, the same values.
struct HistoryQuery {
  std::vector<std::string> inputs;  // results files and folders of them
  std::string order = "given";      // given, time or label:KEY (history/run_order.h)
  std::string where;                // --where EXPR (view/filter.h), of the series
  double min_change_percent = 5;    // --min-change: a smaller change of level is no step
};

// `kernelsweep report FILE.h5... -o DIR`: DIR/index.html and DIR/report.md with tables and plots.
// With --history, FILE|DIR... are the runs of one sweep, and the report is their history: the steps
// found, slowest first, and a timeline of each point with a step (docs/report.md, "A history").
struct ReportRequest {
  std::vector<std::string> files;
  std::string output_directory;
  std::string baseline;   // --baseline IMPLEMENTATION: speed-ups are against it
  std::string reference;  // --reference IMPLEMENTATION: each point's fraction of its speed
  std::string where;
  bool history = false;             // --history
  std::string order = "given";      // --order, with --history
  double min_change_percent = 5;    // --min-change, with --history
  std::string timelines = "steps";  // --timelines steps|all, with --history
};
int write_report(const ReportRequest& request);

// `kernelsweep compare BASE.h5 NEW.h5`: each point same, faster, slower or unclear.
struct CompareRequest {
  std::string base, next;
  std::string where;
  std::string format = "table";    // table, md, json
  double fail_above_percent = -1;  // --fail-above PCT; negative: never fail
  double threshold_percent = 5;    // --threshold T: changes within ±T% count as none (docs/compare.md)
};
int compare_results(const CompareRequest& request);

// `kernelsweep history FILE|DIR...`: the results files of one sweep run again and again, each point's
// medians as a series across them, and the steps in each series (docs/history.md).
struct HistoryRequest {
  HistoryQuery query;
  std::string format = "table";  // table, md, csv, json
  bool fail_on_step = false;     // exit 1 when a point's latest level is a slowdown
};
int print_history(const HistoryRequest& request);

// `kernelsweep import liger CSV -o FILE.h5`: another tool's benchmark results into a results file and
// kernelindex documents.
struct ImportRequest {
  std::string tool;                 // liger
  std::string input;                // the tool's file
  std::string output;               // the results file to write
  std::string documents_directory;  // default: FILE's folder/kernelindex
  std::string kernelindex_format = "json";
  bool overwrite = false;
  std::vector<std::string> labels;  // --label KEY=VALUE: the import's labels (store/run_labels.h)
};
int import_results(const ImportRequest& request);

// `kernelsweep documents FOLDER`: the kernelindex objects of a documents folder (jsonl shards or json
// files), one compact line each on stdout; --point and --run keep those of the points and runs named.
struct DocumentsRequest {
  std::string folder;
  std::vector<std::string> points;  // point ids
  std::vector<std::string> runs;    // run.metadata.name
};
int print_documents(const DocumentsRequest& request);

}  // namespace ks
