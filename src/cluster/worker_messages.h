#pragma once
// What a rank and its worker process say to each other (JSON over a PipeChannel):
//   worker -> rank, once at start:  {"type":"hello","gpu_count":N,"gpu":{…},"host":{…}}
//   rank -> worker:                 {"type":"measure","point":{kernel,implementation,mode,params},
//                                    "protocol":{ProtocolSpec},"check":bool}
//   worker -> rank:                 {"type":"result", MeasureResult fields}
//   rank -> worker:                 {"type":"stop"}
#include <string>

#include <nlohmann/json.hpp>

#include "config/sweep_spec.h"
#include "measure/measurement.h"
#include "plan/point.h"

namespace ks {

using Json = nlohmann::json;

struct MeasureRequest {
  Point point;
  ProtocolSpec protocol;
  bool check = true;
};

struct MeasureResult {
  std::string status;   // passed, failed, error, skipped (crashed and timeout are decided by the rank)
  std::string message;
  std::string started_at, ended_at;
  Timing timing;
  Statistics stats;
  double flops = 0, bytes = 0;
  std::uint64_t device_peak_bytes = 0;
  Json protocol;        // the resolved protocol (protocol_to_json) the point was timed with
  bool worker_exits = false;  // the worker leaves after this result (its CUDA context may be broken)
};

// The seven aggregates as one JSON array (median, p20, p80, mean, min, max, stddev): how both the
// worker's results and the records streamed to rank 0 carry them.
Json to_json(const Statistics& stats);
Statistics statistics_from_json(const Json& j);

Json to_json(const ProtocolSpec& spec);
ProtocolSpec protocol_spec_from_json(const Json& j);

std::string encode(const MeasureRequest& request);
MeasureRequest decode_request(const Json& j);
std::string encode(const MeasureResult& result);
MeasureResult decode_result(const Json& j);

}  // namespace ks
