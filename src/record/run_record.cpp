#include "record/run_record.h"

#include <cstring>
#include <limits>
#include <stdexcept>

#include "common/bytes.h"

namespace ks {
namespace {

// A field list, built on its first use and kept.
template <std::vector<Field<RunRecord>> (*Build)()> const std::vector<Field<RunRecord>>& built_once() {
  static const std::vector<Field<RunRecord>> list = Build();
  return list;
}

constexpr auto fields = built_once<run_record_fields<RunRecord>>;
constexpr auto gpu_fields = built_once<gpu_state_fields<RunRecord>>;
constexpr auto repetition_record_fields = built_once<repetition_fields<RunRecord>>;
constexpr auto collective_record_fields = built_once<collective_fields<RunRecord>>;
constexpr auto speed_of_light_record_fields = built_once<speed_of_light_fields<RunRecord>>;
constexpr auto energy_record_fields = built_once<energy_fields<RunRecord>>;
constexpr auto noise_record_fields = built_once<noise_fields<RunRecord>>;

}  // namespace

std::string slowed_by(const RunRecord& record) {
  if (!gpu_state_was_read(record)) return "";
  return throttle_reason_names((record.gpu_start.throttle_reasons | record.gpu_end.throttle_reasons) &
                               throttle::kSlowing);
}

nlohmann::json to_json(const RunRecord& record) {
  nlohmann::json out = fields_to_json(record, fields());
  out["samples_ns"] = record.samples_ns;
  out.update(fields_to_json(record, repetition_record_fields()));
  if (gpu_state_was_read(record)) out.update(fields_to_json(record, gpu_fields()));
  if (noise_was_recorded(record) || sample_clocks_were_read(record))
    out.update(fields_to_json(record, noise_record_fields()));
  // A sample too short for its clock to be read holds NaN, which JSON writes as null.
  if (!record.sample_sm_clock_mhz.empty()) out["sample_sm_clock_mhz"] = record.sample_sm_clock_mhz;
  // A gang member's worker measured a collective: its count of wrong elements (bus_gbps is the rank's
  // to work out, from the gang's samples).
  if (record.wrong_elements >= 0) out["wrong_elements"] = record.wrong_elements;
  if (speed_of_light_was_found(record)) out.update(fields_to_json(record, speed_of_light_record_fields()));
  if (energy_was_measured(record)) out.update(fields_to_json(record, energy_record_fields()));
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
      record.sample_sm_clock_mhz.push_back(mhz.is_null() ? std::numeric_limits<double>::quiet_NaN()
                                                         : mhz.get<double>());
  if (const auto it = json.find("quantiles"); it != json.end())
    for (const auto& pair : *it) record.quantiles.push_back({pair.at(0).get<double>(), pair.at(1).get<double>()});
  record.wrong_elements = json.value("wrong_elements", record.wrong_elements);
  if (json.contains("sol_pct")) fields_from_json(json, record, speed_of_light_record_fields());
  if (json.contains("joules_per_call")) fields_from_json(json, record, energy_record_fields());
  return record;
}

namespace {

// Every field list a record has: the /runs columns, then the repetition's, the GPU state's, the
// cold measurement's, the collective's, the speed of light's and the energy's.
const std::vector<const std::vector<Field<RunRecord>>*>& all_field_lists() {
  static const std::vector<const std::vector<Field<RunRecord>>*> lists{&fields(),
                                                                       &repetition_record_fields(),
                                                                       &gpu_fields(),
                                                                       &noise_record_fields(),
                                                                       &collective_record_fields(),
                                                                       &speed_of_light_record_fields(),
                                                                       &energy_record_fields()};
  return lists;
}

}  // namespace

void append_run_record_bytes(std::string& out, const RunRecord& record) {
  for (const auto* list : all_field_lists())
    for_each_field(record, *list, [&](const Field<RunRecord>&, const auto& value) {
      if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) append_sized_bytes(out, value);
      else append_value(out, value);
    });
  append_values(out, record.samples_ns);
  append_values(out, record.sample_sm_clock_mhz);
  append_values(out, record.quantiles);
}

RunRecord run_record_from_bytes(std::string_view bytes, std::size_t& offset) {
  RunRecord record;
  for (const auto* list : all_field_lists())
    for (const auto& field : *list)
      std::visit(
          [&](auto access) {
            auto& target = access(record);
            using Value = std::remove_reference_t<decltype(target)>;
            if constexpr (std::is_same_v<Value, std::string>) target = sized_bytes_at(bytes, offset);
            else target = value_at<Value>(bytes, offset);
          },
          field.access);
  record.samples_ns = values_at<double>(bytes, offset);
  record.sample_sm_clock_mhz = values_at<double>(bytes, offset);
  record.quantiles = values_at<Quantile>(bytes, offset);
  return record;
}

}  // namespace ks
