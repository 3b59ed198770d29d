#pragma once
// Kernel plugins: loading shared libraries of kernels into the registry.
//
// A plugin is a library built with kernelsweep_add_plugin against an installed kernelsweep
// (docs/plugins.md). It exports kernelsweep_plugin_entry (kernels/plugin.h), which says which kernel
// API it was built against and adds its kernels and implementations to a registry.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/kernel.h"

namespace ks {

// A plugin that cannot be found, loaded or registered. The message is one line that names the
// library (or the name looked for), says what is wrong and what to do about it.
class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The entries of KERNELSWEEP_PLUGIN_PATH (colon-separated), in order; empty ones are skipped.
std::vector<std::filesystem::path> plugin_path_entries();

// The library a sweep file or the command line names. A path (it contains '/' or ends in .so) is
// taken relative to `base` (the sweep file's folder, or the working directory for the command line)
// and must exist. A bare NAME is looked up as libNAME.so, then NAME.so, in each folder of
// KERNELSWEEP_PLUGIN_PATH (colon-separated) in turn, then in the installed plugin folder
// (PREFIX/lib/kernelsweep/plugins). Throws PluginError, saying where it looked, when nothing is found.
std::filesystem::path find_plugin(const std::string& path_or_name, const std::filesystem::path& base);

// Loads the plugin `library` and registers its kernels and implementations into `registry`, all or
// nothing, each marked with the returned Origin: the plugin's name and version, the library's
// absolute canonical path and the hex SHA-256 of its file. A plugin may add kernels and also
// implementations of kernels registered before it (built-in ones included).
//
// Throws PluginError, leaving `registry` unchanged, when the library cannot be loaded, exports no
// kernelsweep_plugin_entry, was built against another kernel API, or registers a kernel or an
// implementation whose name is taken. Loading a library again into the same registry (by any path
// that leads to the same file) does nothing and returns the same Origin. Libraries stay loaded until
// the process ends.
Origin load_plugin(const std::filesystem::path& library, Registry& registry);

// The folder that holds kernelsweep's Python package (kernelsweep/): PREFIX/lib/kernelsweep/python
// for an installed kernelsweep, the source tree's python/ for one run from its build tree.
std::filesystem::path python_package_folder();
// slurm/sweep.sbatch as installed (PREFIX/share/kernelsweep/slurm), or the source tree's for a
// kernelsweep run from its build tree: the batch script `kernelsweep submit` submits.
std::filesystem::path slurm_batch_script();

}  // namespace ks
