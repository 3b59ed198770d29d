#pragma once
// What the vendor's datasheet promises for a GPU we know, by the name the driver gives it: memory
// bandwidth and dense (not sparse) arithmetic in each dtype, each figure with the datasheet it comes
// from. A point faster than 1.5 times a datasheet figure is flagged implausible whatever was
// measured (speed_of_light.h).
#include <optional>
#include <string>

#include "calibration/calibration.h"

namespace ks {

struct Datasheet {
  std::string product;  // "NVIDIA H100 SXM5 80GB"
  std::string source;   // the document the figures are taken from
  DeviceRates rates;
};

// The datasheet of the GPU the driver names `name` ("NVIDIA H100 80GB HBM3"); none for one the table
// does not hold.
std::optional<Datasheet> datasheet_of(const std::string& name);

}  // namespace ks
