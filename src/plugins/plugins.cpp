#include "plugins/plugins.h"

#include <dlfcn.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/digest.h"
#include "kernels/plugin.h"

// Where `cmake --install` puts the kernelsweep program and plugins (relative to the prefix, as
// GNUInstallDirs names them), and the prefix kernelsweep was configured with: given by CMake
// (cmake/package.cmake).
#if !defined(KS_INSTALL_PREFIX) || !defined(KS_INSTALL_BINDIR) || !defined(KS_INSTALL_PLUGINDIR) || \
    !defined(KS_INSTALL_PYTHONDIR) || !defined(KS_SOURCE_PYTHONDIR)
#error \
    "src/plugins/plugins.cpp needs KS_INSTALL_PREFIX, KS_INSTALL_BINDIR, KS_INSTALL_PLUGINDIR, KS_INSTALL_PYTHONDIR and KS_SOURCE_PYTHONDIR (cmake/package.cmake)"
#endif

namespace ks {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPathVariable = "KERNELSWEEP_PLUGIN_PATH";

// The prefix of the installation this program runs from (it runs from PREFIX/bin, wherever the
// installation was put with cmake --install --prefix); nothing for a program run from anywhere else
// (a build tree).
std::optional<fs::path> own_install_prefix() {
  const fs::path bindir(KS_INSTALL_BINDIR);
  std::error_code error;
  const fs::path program = fs::read_symlink("/proc/self/exe", error);
  if (!error && bindir.is_relative() && !bindir.empty()) {
    std::vector<fs::path> parts(bindir.begin(), bindir.end());
    fs::path prefix = program.parent_path();
    bool installed = true;
    for (auto part = parts.rbegin(); part != parts.rend() && installed; ++part) {
      installed = prefix.filename() == *part;
      prefix = prefix.parent_path();
    }
    if (installed) return prefix;
  }
  return std::nullopt;
}

// The installed plugin folder: PREFIX/lib/kernelsweep/plugins of the installation this program runs
// from, or of the configured prefix for a program run from a build tree.
fs::path installed_plugin_folder() {
  return (own_install_prefix().value_or(fs::path(KS_INSTALL_PREFIX)) / KS_INSTALL_PLUGINDIR).lexically_normal();
}

bool names_a_path(const std::string& path_or_name) {
  return path_or_name.find('/') != std::string::npos || path_or_name.ends_with(".so");
}

std::string file_sha256(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw PluginError(fmt::format("plugin library {}: cannot be read: check its permissions", file.string()));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw PluginError(fmt::format("plugin library {}: reading it failed", file.string()));
  return sha256_hex(bytes);
}

// The origin of what `library` registered into `registry`, when it already did.
std::optional<Origin> origin_of_loaded(const Registry& registry, const std::string& library) {
  for (const KernelSpec& kernel : registry.all()) {
    if (kernel.origin.library == library) return kernel.origin;
    for (const ImplementationSpec& implementation : kernel.implementations)
      if (implementation.origin.library == library) return implementation.origin;
  }
  return std::nullopt;
}

// Why `entry` could not be registered into `registry` (Registry::add refused it with `refusal`), as
// one line naming the name that is taken. The plugin's registrations are learned by registering it
// where only its own names can collide: into a copy of `registry` whose kernels have no
// implementations (which fails only when the plugin declares a kernel that is taken, or adds to a
// kernel nobody declares), or else into an empty registry (which fails only when it adds to
// kernels it does not declare itself). When neither succeeds (a plugin that declares a taken kernel
// and adds to kernels it does not declare), Registry's own message follows the plugin's name.
std::string why_refused(const PluginEntry& entry, const Registry& registry, const Origin& origin,
                        const std::string& refusal) {
  const std::string plugin = fmt::format("plugin {} ({})", origin.plugin, origin.library);

  Registry kernels_only;
  for (KernelSpec kernel : registry.all()) {
    kernel.implementations.clear();
    kernels_only.add(std::move(kernel));
  }
  try {
    entry.register_into(kernels_only, origin);
    for (const KernelSpec& kernel : kernels_only.all()) {
      const KernelSpec* existing = registry.find(kernel.name);
      if (!existing) continue;
      for (const ImplementationSpec& implementation : kernel.implementations)
        if (const ImplementationSpec* taken = existing->implementation(implementation.name))
          return fmt::format(
              "{} registers implementation {}/{}, which is already registered ({}): rename the plugin's "
              "implementation",
              plugin, kernel.name, implementation.name, Registry::describe(taken->origin));
    }
  } catch (const std::invalid_argument&) {}

  Registry alone;
  try {
    entry.register_into(alone, origin);
    for (const KernelSpec& kernel : alone.all())
      if (const KernelSpec* taken = registry.find(kernel.name))
        return fmt::format(
            "{} registers kernel {}, which is already registered ({}): rename the plugin's kernel, or load "
            "only one of the two",
            plugin, kernel.name, Registry::describe(taken->origin));
  } catch (const std::invalid_argument&) {}

  return fmt::format("{} cannot be registered: {}", plugin, refusal);
}

}  // namespace

std::vector<fs::path> plugin_path_entries() {
  std::vector<fs::path> folders;
  const char* value = std::getenv(kPathVariable);
  if (!value) return folders;
  std::string_view rest(value);
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string_view folder = rest.substr(0, colon);
    if (!folder.empty()) folders.emplace_back(folder);
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
  }
  return folders;
}

fs::path find_plugin(const std::string& path_or_name, const fs::path& base) {
  if (path_or_name.empty())
    throw PluginError("a plugin is named by an empty string: give its name (axpy) or the path of its library");
  if (names_a_path(path_or_name)) {
    const fs::path library = fs::absolute(base / path_or_name).lexically_normal();
    if (!fs::is_regular_file(library))
      throw PluginError(fmt::format("plugin library {}: no such file (a plugin's path is taken relative to {})",
                                    library.string(), fs::absolute(base).lexically_normal().string()));
    return library;
  }

  const std::vector<fs::path> listed = plugin_path_entries();
  const fs::path installed = installed_plugin_folder();
  std::vector<fs::path> folders = listed;
  folders.push_back(installed);
  for (const fs::path& folder : folders)
    for (const std::string& file : {"lib" + path_or_name + ".so", path_or_name + ".so"}) {
      const fs::path candidate = folder / file;
      if (fs::is_regular_file(candidate)) return fs::absolute(candidate).lexically_normal();
    }

  std::vector<std::string> listed_text;
  for (const fs::path& folder : listed) listed_text.push_back(folder.string());
  throw PluginError(fmt::format(
      "plugin {} not found: no lib{}.so or {}.so in {} {} nor in the installed plugin folder {}: install it there, "
      "add its folder to {}, or name its library by path",
      path_or_name, path_or_name, path_or_name, kPathVariable,
      !listed.empty()              ? fmt::format("({})", fmt::join(listed_text, ", "))
      : std::getenv(kPathVariable) ? std::string("(no folders)")
                                   : std::string("(not set)"),
      installed.string(), kPathVariable));
}

Origin load_plugin(const fs::path& library, Registry& registry) {
  std::error_code error;
  const fs::path canonical = fs::canonical(library, error);
  if (error)
    throw PluginError(
        fmt::format("plugin library {}: {}: name an existing library", library.string(), error.message()));
  const std::string path = canonical.string();
  if (std::optional<Origin> loaded = origin_of_loaded(registry, path)) return *loaded;

  // Libraries stay loaded, refused ones too, until the process ends: unloading one would run its
  // static destructors and CUDA's teardown of its modules while nothing proves that none of its code
  // is still referenced.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    throw PluginError(fmt::format(
        "plugin library {} cannot be loaded: {}: check that it was built for this machine and that the libraries "
        "it needs are found (ldd {})",
        path, why ? why : "dlopen failed", path));
  }
  ::dlerror();
  void* symbol = ::dlsym(handle, kPluginEntrySymbol);
  if (!symbol)
    throw PluginError(fmt::format("{}: not a kernelsweep plugin (no {}): build it with kernelsweep_add_plugin", path,
                                  kPluginEntrySymbol));

  const auto entry_function = reinterpret_cast<const PluginEntry* (*)()>(symbol);
  const PluginEntry* entry = entry_function();
  // api_version first: nothing else of the entry is read before it matches.
  if (!entry)
    throw PluginError(fmt::format("plugin library {}: its {} returned nothing: rebuild it with kernelsweep_add_plugin",
                                  path, kPluginEntrySymbol));
  if (entry->api_version != kKernelApiVersion)
    throw PluginError(fmt::format(
        "plugin library {}: built against kernel API {}; this kernelsweep has {}: rebuild the plugin against this "
        "kernelsweep",
        path, entry->api_version, kKernelApiVersion));
  if (!entry->name || !*entry->name || !entry->version || !entry->register_into)
    throw PluginError(fmt::format(
        "plugin library {}: its {} gives no name, version or registration: rebuild it with kernelsweep_add_plugin",
        path, kPluginEntrySymbol));

  const Origin origin{entry->name, entry->version, path, file_sha256(canonical)};
  try {
    entry->register_into(registry, origin);
  } catch (const std::invalid_argument& refusal) {
    throw PluginError(why_refused(*entry, registry, origin, refusal.what()));
  }
  return origin;
}

fs::path python_package_folder() {
  if (const auto prefix = own_install_prefix()) return (*prefix / KS_INSTALL_PYTHONDIR).lexically_normal();
  return fs::path(KS_SOURCE_PYTHONDIR);
}

fs::path slurm_batch_script() {
  if (const auto prefix = own_install_prefix())
    return (*prefix / KS_INSTALL_SLURMDIR / "sweep.sbatch").lexically_normal();
  return fs::path(KS_SOURCE_SLURMDIR) / "sweep.sbatch";
}

}  // namespace ks
