#pragma once
// Liger-Kernel's benchmark CSV (benchmark/data/all_benchmark_data.csv, as Liger's
// benchmark/scripts/utils.py writes it) into kernelsweep runs and kernelindex documents.
// docs/import.md says where each column goes; in short:
// - speed rows (metric_name speed, unit ms) are timed runs: median, p20 and p80 are y_value_50,
//   y_value_20 and y_value_80, ms converted to ns;
// - memory rows (memory, MB) are peak-memory measurements: device_peak_bytes is y_value_50 MiB (Liger
//   divides torch.cuda.max_memory_allocated() by 2**20);
// - kernel, implementation and mode are kernel_name, kernel_provider and kernel_operation_mode; the
//   parameters are x_name: x_value with every entry of extra_benchmark_config_str, under Liger's names.
// The documents follow the seed (tests/data/seed/000_dd8fd397e3a8b2f1.txt, Liger's own row of
// distill_cosine_loss/full/liger at 1024 tokens): one protocol per timed pass (and one per measured
// pass for memory), one environment per GPU name, the Liger release as a label of each run.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/import.h"

namespace ks {

// Every row of the CSV `text` (file_label names the file in messages). Rows that cannot be imported
// (a metric other than speed/ms and memory/MB, a figure that is nan, an exact copy of an earlier row)
// come back as skipped, with the reason. Throws ImportInputError, naming the file, the line and the
// column, for text that is not CSV, a missing column, an empty name, a figure that is not a number,
// an extra_benchmark_config_str that is not a dict, or a timestamp that is not a time.
ImportedFile import_liger_csv(std::string_view text, const std::string& file_label, const KernelTitles& titles);

// A row's parameters under kernelsweep's names, so that imported points sit beside measured ones
// (one axis, one column): Liger's BT, H and V are tokens, hidden and vocab, and dtypes are short
// (torch.bfloat16 -> bf16). The CSV's own fields stay in each document's sourceNative.
Json kernelsweep_names(const Json& params);
// The workload segment of a run's externalId, as the seed writes it, from kernelsweep_names's
// parameters: those that are sizes (positive integers) and the dtype:
// "hidden4096-tokens1024-vocab128256-bf16".
std::string liger_shape_slug(const Json& params);
// An extra_benchmark_config_str as an object: JSON (what json.dumps writes), a Python dict literal
// (single quotes, True/False/None), empty or null (no entries). Throws std::invalid_argument.
Json liger_extra_config(const std::string& text);

}  // namespace ks
