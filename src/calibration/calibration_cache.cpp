#include "calibration/calibration_cache.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace ks {
namespace {

// Letters, digits, '.', '-' and '_' of a name, the others as '_': a file name on any filesystem.
std::string file_name_part(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return out.empty() ? "unknown" : out;
}

}  // namespace

CalibrationMode calibration_mode_of(const std::string& text) {
  if (text == "auto") return CalibrationMode::automatic;
  if (text == "fresh") return CalibrationMode::fresh;
  if (text == "off") return CalibrationMode::off;
  throw std::invalid_argument("calibration \"" + text + "\" is none of auto, fresh, off");
}

std::filesystem::path site_calibration_folder() {
  const char* site = std::getenv("KERNELSWEEP_CALIBRATION_DIR");
  return site && *site ? std::filesystem::path(site) : std::filesystem::path();
}

std::filesystem::path calibration_folder(const std::filesystem::path& output_folder) {
  const std::filesystem::path site = site_calibration_folder();
  return site.empty() ? output_folder / "calibration" : site;
}

std::filesystem::path calibration_cache_file(const std::filesystem::path& folder, const HostInfo& host,
                                             const GpuInfo& gpu, int node_ranks) {
  const std::string devices = gpu.index >= 0 ? fmt::format("{}.driver-{}", gpu.uuid, gpu.driver_version) : "cpu";
  return folder / file_name_part(fmt::format("{}.{}.{}-cores.{}-ranks.json", host.hostname, devices, host.cpus_allowed,
                                             node_ranks));
}

std::optional<RankCalibration> read_cached_calibration(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  const Json json = Json::parse(in, nullptr, false);
  if (json.is_discarded()) return std::nullopt;
  try {
    RankCalibration calibration = rank_calibration_from_json(json);
    calibration.reused = true;
    return calibration;
  } catch (const std::exception&) { return std::nullopt; }
}

void write_cached_calibration(const std::filesystem::path& file, const RankCalibration& calibration) {
  std::filesystem::create_directories(file.parent_path());
  const std::filesystem::path partial = file.string() + fmt::format(".partial-{}", ::getpid());
  {
    std::ofstream out(partial);
    out << to_json(calibration).dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + partial.string());
  }
  std::filesystem::rename(partial, file);
}

}  // namespace ks
