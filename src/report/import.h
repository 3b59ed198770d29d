#pragma once
// What `kernelsweep import` asks of each tool it reads (report/import_liger.h is one): the tool's
// file turned into runs, each a RunRecord for /runs and the kernelindex documents a sweep would
// write for it, or into reasons why a row cannot be imported. import.cpp does the rest for every
// tool alike: the results file, the documents folder, the summary.
//
// Conventions every tool's mapping follows (docs/import.md):
// - A timed run has median_ns, p20_ns and p80_ns (finite), no samples, n_warmup and n_repeat 0 (the
//   tool does not say how many repetitions it timed) and mean/min/max/stddev NaN; view.h's timed()
//   takes it for timed.
// - A memory measurement has device_peak_bytes and every timing figure NaN.
// - Figures the tool does not give (flops, bytes, rates) are NaN, never 0.
#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernelindex/document_writer.h"
#include "record/run_record.h"
#include "store/stored_run.h"

namespace ks {

// Input that cannot be imported at all (a missing column, a value that is not a number): what()
// is the one line to print, "FILE:LINE: column NAME: what is wrong".
struct ImportInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One imported row: its /runs record and its documents. The run document cites the other four by
// the digests they carry (CitedDocument::digest, document_digest(workload)).
struct ImportedRun {
  std::size_t line = 0;  // where it is in the tool's file
  RunRecord record;
  Json run;                                                                    // BenchmarkRun
  std::shared_ptr<const CitedDocument> protocol, environment, implementation;  // shared by many runs
  Json workload;
  Citations cited;  // the digests the run document cites
};

// A row left out, and why (the summary counts rows by reason).
struct SkippedRow {
  std::size_t line = 0;
  std::string reason;
};

struct ImportedFile {
  std::string sweep_name;  // the results file's sweep_name: "liger-import"
  std::vector<ImportedRun> runs;
  std::vector<SkippedRow> skipped;
  std::size_t rows = 0;  // the data rows the file has (runs + skipped)
};

// A kernel's title ("Chunked distillation cosine loss" for distill_cosine_loss) where kernelsweep
// knows a kernel of that name, else the name itself.
using KernelTitles = std::function<std::string(const std::string& kernel)>;

// --- GPU names ---------------------------------------------------------------------------------------
// What a GPU's name alone says about it: other tools record the name (torch.cuda.get_device_name)
// and nothing else, where kernelsweep's own runs read every fact from the device (env/environment.h).

// An ExecutionEnvironment's spec.hardware from a GPU name: vendor ("nvidia", "amd", "intel", or
// "unknown"), product and formFactor as env/environment.h's gpu_product splits the name
// ("NVIDIA A100-SXM4-80GB" -> "NVIDIA A100", "SXM4-80GB"), and architecture from a table of known
// products ("sm_80" for an A100, "gfx942" for an MI300X). formFactor and architecture are left out
// where the name does not tell them.
nlohmann::json hardware_of_gpu_name(const std::string& name);

// The vendor the name starts with ("nvidia", "amd", "intel"), else what its product line says
// ("GeForce", "Radeon"...), else "unknown".
std::string gpu_vendor(const std::string& name);

// The name without its leading vendor word: "NVIDIA A100-SXM4-80GB" -> "A100-SXM4-80GB".
std::string gpu_name_without_vendor(const std::string& name);

}  // namespace ks
