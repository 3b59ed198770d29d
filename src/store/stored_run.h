#pragma once
// A row of /runs: a RunRecord as the cluster stage made it, the documents it cites (by digest), and
// where its raw samples lie in /samples, its quantiles in /quantiles and its samples' SM clocks in
// /sample_clocks.
#include <cstdint>
#include <string>

#include "record/run_record.h"

namespace ks {

// The four documents a run cites, by digest ("sha256:…"): what the run's figures are comparable by.
struct Citations {
  std::string protocol_digest, environment_digest, workload_digest, implementation_digest;
};

struct StoredRun : RunRecord {
  StoredRun() = default;
  StoredRun(RunRecord record, Citations citations) : RunRecord(std::move(record)), cited(std::move(citations)) {}
  Citations cited;
  std::uint64_t samples_offset = 0, samples_count = 0;      // set by ResultsFile::append
  std::uint64_t quantiles_offset = 0, quantiles_count = 0;  // the same for /quantiles (layout 3 on)
  // The same for /sample_clocks (layout 4 on): each sample's SM clock, where the worker read them
  // (count 0 where none was read, else samples_count).
  std::uint64_t sample_clocks_offset = 0, sample_clocks_count = 0;
  std::uint64_t strings_check = 0;  // set by ResultsFile::append, checked when the file is read
};

}  // namespace ks
