#include "cluster/run_record.h"

#include <limits>

namespace ks {
namespace {

const std::vector<Field<RunRecord>>& fields() {
  static const std::vector<Field<RunRecord>> list = run_record_fields();
  return list;
}

const std::vector<Field<RunRecord>>& gpu_fields() {
  static const std::vector<Field<RunRecord>> list = gpu_state_fields();
  return list;
}

const std::vector<Field<RunRecord>>& repetition_record_fields() {
  static const std::vector<Field<RunRecord>> list = repetition_fields();
  return list;
}

const std::vector<Field<RunRecord>>& noise_record_fields() {
  static const std::vector<Field<RunRecord>> list = noise_fields();
  return list;
}

}  // namespace

std::string slowed_by(const RunRecord& record) {
  if (!gpu_state_was_read(record)) return "";
  return throttle_reason_names((record.gpu_start.throttle_reasons | record.gpu_end.throttle_reasons) & throttle::kSlowing);
}

nlohmann::json to_json(const RunRecord& record) {
  nlohmann::json out = fields_to_json(record, fields());
  out["samples_ns"] = record.samples_ns;
  out.update(fields_to_json(record, repetition_record_fields()));
  if (gpu_state_was_read(record)) out.update(fields_to_json(record, gpu_fields()));
  if (noise_was_recorded(record) || sample_clocks_were_read(record)) out.update(fields_to_json(record, noise_record_fields()));
  // A sample too short for its clock to be read holds NaN, which JSON writes as null.
  if (!record.sample_sm_clock_mhz.empty()) out["sample_sm_clock_mhz"] = record.sample_sm_clock_mhz;
  if (!record.quantiles.empty()) {
    nlohmann::json& quantiles = out["quantiles"] = nlohmann::json::array();
    for (const Quantile& q : record.quantiles) quantiles.push_back({q.quantile, q.value_ns});
  }
  return out;
}

RunRecord run_record_from_json(const nlohmann::json& json) {
  RunRecord record;
  fields_from_json(json, record, fields());
  record.samples_ns = json.at("samples_ns").get<std::vector<double>>();
  if (json.contains("repetition")) fields_from_json(json, record, repetition_record_fields());
  if (json.contains(gpu_fields().front().name)) fields_from_json(json, record, gpu_fields());
  if (json.contains(noise_record_fields().front().name)) fields_from_json(json, record, noise_record_fields());
  if (const auto it = json.find("sample_sm_clock_mhz"); it != json.end())
    for (const auto& mhz : *it)
      record.sample_sm_clock_mhz.push_back(mhz.is_null() ? std::numeric_limits<double>::quiet_NaN() : mhz.get<double>());
  if (const auto it = json.find("quantiles"); it != json.end())
    for (const auto& pair : *it) record.quantiles.push_back({pair.at(0).get<double>(), pair.at(1).get<double>()});
  return record;
}

}  // namespace ks
