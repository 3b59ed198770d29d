#pragma once
// What a GPU's name alone says about it, for results measured elsewhere (imports): other tools
// record the name (torch.cuda.get_device_name) and nothing else, where kernelsweep's own runs read
// every fact from the device (env/environment.h).
#include <string>

#include <nlohmann/json.hpp>

namespace ks {

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
