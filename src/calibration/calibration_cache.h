#pragma once
// A rank's calibration kept in the output folder (calibration/ beside the results file), so that
// --resume and later runs on the same devices reuse it instead of measuring again: one file for each
// host, GPU (its UUID and driver version), count of cores the rank may use and count of ranks on
// the node (which share its CPU's memory), since each changes the figures. `run --calibrate fresh` measures again and
// replaces the file.
#include <filesystem>
#include <optional>
#include <string>

#include "calibration/calibration.h"
#include "env/environment.h"

namespace ks {

// How `run` calibrates its ranks: auto reuses a rank's kept calibration and measures where there is
// none, fresh measures again and replaces it, off does neither (no speed of light).
enum class CalibrationMode { automatic, fresh, off };
// "auto", "fresh" or "off"; throws std::invalid_argument naming the others.
CalibrationMode calibration_mode_of(const std::string& text);

// The site's folder of calibrations, $KERNELSWEEP_CALIBRATION_DIR (one folder for every run of a site
// or a test suite); empty where it is not set.
std::filesystem::path site_calibration_folder();

// Where calibrations are kept: the site's folder where set, else `output_folder`/calibration.
std::filesystem::path calibration_folder(const std::filesystem::path& output_folder);

// The file of the devices of a rank on `host` with `gpu` (index < 0: none), one of `node_ranks` ranks
// of its node, in `folder`.
std::filesystem::path calibration_cache_file(const std::filesystem::path& folder, const HostInfo& host,
                                             const GpuInfo& gpu, int node_ranks = 1);

// The calibration kept in `file`, marked reused; none when there is no such file or it cannot be read
// (a file from another version, cut short): the rank then measures again.
std::optional<RankCalibration> read_cached_calibration(const std::filesystem::path& file);

// Writes `calibration` to `file` whole (a temporary file renamed over it), making its folder.
void write_cached_calibration(const std::filesystem::path& file, const RankCalibration& calibration);

}  // namespace ks
