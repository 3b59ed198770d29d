#pragma once
// Speed-ups and fractions: each point's median against another implementation's at the same shape
// (its mode and parameters), and each implementation's geometric-mean speed-up over the baseline.
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "report/report_model.h"

namespace ks::report_page {

// Each point's medians by label, keyed by its mode and parameters.
using MediansByShape = std::unordered_map<std::string, std::map<std::string, double>>;

MediansByShape medians_by_shape(const std::vector<PointRow>& rows);

// The median of `label` at r's shape over r's median; kNone where either is missing or not a basis
// for a ratio (not measured, or flagged implausible).
double ratio_to(const MediansByShape& medians, const PointRow& r, const std::string& label);

// The label an option names: itself, or the first label of that implementation. Empty when none.
std::string resolve_label(const std::string& option, const KernelSection& section);

// The CPU implementation where the kernel has one, else the first label.
std::string default_baseline(const KernelSection& section);

// Each label's geometric-mean speed-up over the section's baseline, per mode.
std::vector<Speedup> speedups_of(const KernelSection& section);

}  // namespace ks::report_page
