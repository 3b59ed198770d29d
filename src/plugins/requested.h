#pragma once
// The plugins a command loads before it reads a sweep: those of KERNELSWEEP_PLUGIN_PATH and those
// named with --plugin (src/run adds those a sweep file names). A rank's worker loads the same ones.
#include <string>
#include <vector>

#include "kernels/kernel.h"

namespace ks {

// Loads every plugin of KERNELSWEEP_PLUGIN_PATH (colon-separated: libraries, or folders whose *.so
// files are all loaded), then each of `named` (paths relative to the working directory, or names
// looked up as find_plugin looks them up). Returns the libraries loaded, in loading order. Throws
// PluginError naming the first that fails.
std::vector<std::string> load_requested_plugins(const std::vector<std::string>& named, Registry& registry);

}  // namespace ks
