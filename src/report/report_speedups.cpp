#include "report/report_model.h"

#include <algorithm>
#include <cmath>

#include "calibration/speed_of_light.h"

namespace ks::report_page {
namespace {

std::string shape_key(const ViewRow& row) { return row.run.mode + '\n' + row.run.params_json; }

// A point flagged implausible (its rates beyond its device: docs/speed-of-light.md) is shown, never
// the basis of a speed-up or a fraction, on either side of one.
bool ratio_basis(const ViewRow& row) { return measured(row) && !has_flag(row.run.flags, "implausible"); }

}  // namespace

MediansByShape medians_by_shape(const std::vector<PointRow>& rows) {
  MediansByShape out;
  for (const auto& r : rows)
    if (ratio_basis(*r.row)) out[shape_key(*r.row)].emplace(r.label, r.row->run.stats.median_ns);
  return out;
}

double ratio_to(const MediansByShape& medians, const PointRow& r, const std::string& label) {
  if (label.empty() || !ratio_basis(*r.row)) return kNone;
  const auto shape = medians.find(shape_key(*r.row));
  if (shape == medians.end()) return kNone;
  const auto other = shape->second.find(label);
  if (other == shape->second.end()) return kNone;
  return other->second / r.row->run.stats.median_ns;
}

std::string resolve_label(const std::string& option, const KernelSection& section) {
  if (std::find(section.labels.begin(), section.labels.end(), option) != section.labels.end()) return option;
  for (const auto& r : section.rows)
    if (r.row->run.implementation == option) return r.label;
  return "";
}

std::string default_baseline(const KernelSection& section) {
  const std::string cpu = resolve_label("cpu", section);
  return cpu.empty() ? section.labels.front() : cpu;
}

std::vector<Speedup> speedups_of(const KernelSection& section) {
  std::vector<Speedup> out;
  if (section.baseline.empty()) return out;
  for (const auto& label : section.labels) {
    if (label == section.baseline) continue;
    for (const auto& mode : section.modes) {
      double log_sum = 0;
      std::size_t n = 0;
      for (const auto& r : section.rows) {
        if (r.label != label || r.row->run.mode != mode || !std::isfinite(r.speedup) || r.speedup <= 0) continue;
        log_sum += std::log(r.speedup);
        ++n;
      }
      if (n > 0) out.push_back({label, mode, std::exp(log_sum / static_cast<double>(n)), n});
    }
  }
  return out;
}

}  // namespace ks::report_page
