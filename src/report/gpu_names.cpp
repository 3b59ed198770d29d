#include "report/gpu_names.h"

#include <regex>
#include <utility>
#include <vector>

#include "env/environment.h"

namespace ks {
namespace {

bool starts_with_word(const std::string& name, const std::string& word) {
  return name.size() > word.size() && name.compare(0, word.size(), word) == 0 && name[word.size()] == ' ';
}

// The compute architecture of a product, from its name: NVIDIA's compute capability as sm_XY, AMD's
// gfx target. The patterns are matched anywhere in the name, between word boundaries.
std::string architecture_of(const std::string& name) {
  static const std::vector<std::pair<std::regex, std::string>> table = [] {
    const std::pair<const char*, const char*> rows[] = {
        {R"(\bP100\b)", "sm_60"},
        {R"(\bV100\b)", "sm_70"},
        {R"(\bT4\b|\bRTX 20\d\d\b)", "sm_75"},
        {R"(\bA100\b|\bA30\b|\bA800\b)", "sm_80"},
        {R"(\bA(10G?|16|2|40)\b|\bRTX 30\d\d\b|\bRTX A\d{4}\b)", "sm_86"},
        {R"(\bL(4|20|40S?)\b|\bRTX 40\d\d\b|\bRTX \d{4} Ada\b)", "sm_89"},
        {R"(\bGH200\b|\bH100\b|\bH200\b|\bH800\b|\bH20\b)", "sm_90"},
        {R"(\bGB200\b|\bB200\b|\bB100\b)", "sm_100"},
        {R"(\bGB300\b|\bB300\b)", "sm_103"},
        {R"(\bRTX 50\d\d\b|\bRTX PRO \d{4} Blackwell\b)", "sm_120"},
        {R"(\bMI100\b)", "gfx908"},
        {R"(\bMI2(10|50X?)\b)", "gfx90a"},
        {R"(\bMI3(00[AX]?|25X)\b)", "gfx942"},
        {R"(\bMI35[05]X\b)", "gfx950"},
    };
    std::vector<std::pair<std::regex, std::string>> out;
    for (const auto& [pattern, architecture] : rows) out.emplace_back(std::regex(pattern), architecture);
    return out;
  }();
  for (const auto& [pattern, architecture] : table)
    if (std::regex_search(name, pattern)) return architecture;
  return {};
}

}  // namespace

std::string gpu_vendor(const std::string& name) {
  static const std::pair<const char*, const char*> leading[] = {
      {"NVIDIA", "nvidia"}, {"AMD", "amd"}, {"Intel(R)", "intel"}, {"Intel", "intel"}};
  for (const auto& [word, vendor] : leading)
    if (starts_with_word(name, word)) return vendor;
  static const std::pair<const char*, const char*> lines[] = {{"Tesla", "nvidia"},  {"GeForce", "nvidia"},
                                                              {"Quadro", "nvidia"}, {"Radeon", "amd"},
                                                              {"Instinct", "amd"},  {"Data Center GPU", "intel"}};
  for (const auto& [word, vendor] : lines)
    if (name.find(word) != std::string::npos) return vendor;
  return "unknown";
}

std::string gpu_name_without_vendor(const std::string& name) {
  for (const char* word : {"NVIDIA", "AMD", "Intel(R)", "Intel"})
    if (starts_with_word(name, word)) return name.substr(std::string(word).size() + 1);
  return name;
}

nlohmann::json hardware_of_gpu_name(const std::string& name) {
  const GpuProduct product = gpu_product(name);
  nlohmann::json hardware = {{"vendor", gpu_vendor(name)}, {"product", product.product}};
  if (!product.form_factor.empty()) hardware["formFactor"] = product.form_factor;
  if (const std::string architecture = architecture_of(name); !architecture.empty())
    hardware["architecture"] = architecture;
  return hardware;
}

}  // namespace ks
