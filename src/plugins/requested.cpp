#include "plugins/requested.h"

#include <algorithm>
#include <filesystem>

#include "plugins/plugins.h"

namespace ks {
namespace {

namespace fs = std::filesystem;

// The *.so files of a folder, in name order (a folder's listing order is the file system's).
std::vector<fs::path> libraries_in(const fs::path& folder) {
  std::vector<fs::path> libraries;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error))
    if (entry.is_regular_file() && entry.path().extension() == ".so") libraries.push_back(entry.path());
  std::sort(libraries.begin(), libraries.end());
  return libraries;
}

}  // namespace

std::vector<std::string> load_requested_plugins(const std::vector<std::string>& named, Registry& registry) {
  std::vector<std::string> loaded;
  const auto load = [&](const fs::path& library) {
    const Origin origin = load_plugin(library, registry);
    if (std::find(loaded.begin(), loaded.end(), origin.library) == loaded.end()) loaded.push_back(origin.library);
  };
  for (const fs::path& entry : plugin_path_entries()) {
    if (fs::is_directory(entry))
      for (const fs::path& library : libraries_in(entry)) load(library);
    else load(find_plugin(entry.string(), fs::current_path()));
  }
  for (const std::string& name : named) load(find_plugin(name, fs::current_path()));
  return loaded;
}

}  // namespace ks
