#include "cluster/run_record.h"

namespace ks {
namespace {

const std::vector<Field<RunRecord>>& fields() {
  static const std::vector<Field<RunRecord>> list = run_record_fields();
  return list;
}

}  // namespace

nlohmann::json to_json(const RunRecord& record) {
  nlohmann::json out = fields_to_json(record, fields());
  out["samples_ns"] = record.samples_ns;
  return out;
}

RunRecord run_record_from_json(const nlohmann::json& json) {
  RunRecord record;
  fields_from_json(json, record, fields());
  record.samples_ns = json.at("samples_ns").get<std::vector<double>>();
  return record;
}

}  // namespace ks
