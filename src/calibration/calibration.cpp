#include "calibration/calibration.h"

#include <cmath>

namespace ks {
namespace {

Json number_or_null(double value) { return std::isnan(value) ? Json() : Json(value); }
double number_from(const Json& json, const char* key) {
  const auto it = json.find(key);
  return it == json.end() || it->is_null() ? std::numeric_limits<double>::quiet_NaN() : it->get<double>();
}

void put_device(Json& out, const DeviceCalibration& device) {
  out["backend"] = device.backend;
  out["device"] = device.device;
  out["uuid"] = device.uuid;
  out["driver"] = device.driver;
  out["cores"] = device.cores;
  out["cache_bytes"] = device.cache_bytes;
  if (device.backend == "cpu") out["measured_beside"] = device.measured_beside;
  out["memory_gbps"] = number_or_null(device.measured.memory_gbps);
  out["copy_gbps"] = number_or_null(device.copy_gbps);
  out["triad_gbps"] = number_or_null(device.triad_gbps);
  out["tflops"] = to_json(device.measured).at("tflops");
  out["datasheet"] = device.datasheet ? to_json(*device.datasheet) : Json();
  out["problems"] = device.problems;
}

DeviceCalibration device_from(const Json& json) {
  DeviceCalibration device;
  device.backend = json.at("backend").get<std::string>();
  device.device = json.at("device").get<std::string>();
  device.uuid = json.value("uuid", "");
  device.driver = json.value("driver", "");
  device.cores = json.value("cores", 0);
  device.cache_bytes = json.value("cache_bytes", std::int64_t{0});
  device.measured_beside = json.value("measured_beside", 1);
  device.copy_gbps = number_from(json, "copy_gbps");
  device.triad_gbps = number_from(json, "triad_gbps");
  device.measured = device_rates_from_json(json);
  if (const auto it = json.find("datasheet"); it != json.end() && !it->is_null())
    device.datasheet = device_rates_from_json(*it);
  device.problems = json.value("problems", std::vector<std::string>{});
  return device;
}

}  // namespace

std::optional<double> DeviceRates::tflops_of(const std::string& dtype) const {
  const auto it = tflops.find(dtype);
  if (it == tflops.end() || std::isnan(it->second)) return std::nullopt;
  return it->second;
}

Json to_json(const DeviceRates& rates) {
  Json tflops = Json::object();
  for (const auto& [dtype, rate] : rates.tflops) tflops[dtype] = number_or_null(rate);
  return {{"memory_gbps", number_or_null(rates.memory_gbps)}, {"tflops", tflops}};
}

DeviceRates device_rates_from_json(const Json& json) {
  DeviceRates rates;
  rates.memory_gbps = number_from(json, "memory_gbps");
  if (const auto it = json.find("tflops"); it != json.end())
    for (const auto& [dtype, rate] : it->items())
      rates.tflops[dtype] = rate.is_null() ? std::numeric_limits<double>::quiet_NaN() : rate.get<double>();
  return rates;
}

Json to_json(const RankCalibration& calibration) {
  Json out = {{"rank", calibration.rank}, {"host", calibration.host}};
  put_device(out, calibration.primary());
  if (calibration.gpu) {
    Json cpu = Json::object();
    put_device(cpu, calibration.cpu);
    out["cpu"] = std::move(cpu);
  }
  out["seconds"] = calibration.seconds;
  out["measured_at"] = calibration.measured_at;
  out["reused"] = calibration.reused;
  return out;
}

RankCalibration rank_calibration_from_json(const Json& json) {
  RankCalibration calibration;
  calibration.rank = json.at("rank").get<int>();
  calibration.host = json.at("host").get<std::string>();
  if (const auto it = json.find("cpu"); it != json.end()) {
    calibration.gpu = device_from(json);
    calibration.cpu = device_from(*it);
  } else {
    calibration.cpu = device_from(json);
  }
  calibration.seconds = json.value("seconds", 0.0);
  calibration.measured_at = json.value("measured_at", "");
  calibration.reused = json.value("reused", false);
  return calibration;
}

}  // namespace ks
