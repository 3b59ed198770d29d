#pragma once
// The entry point of a plugin: a shared library of kernels and implementations, built against an
// installed kernelsweep and loaded by it at run time (docs/plugins.md).
//
// A plugin's sources declare kernels and implementations exactly as the built-in ones do
// (kernels/kernel.h); kernelsweep_add_plugin (CMake) adds one generated source that says
//
//   KS_PLUGIN_ENTRY("axpy", "0.1.0")
//
// which exports the function kernelsweep looks up, kernelsweep_plugin_entry. Plugin authors do not
// write it themselves.
#include "kernels/kernel.h"

namespace ks {

// What kernelsweep_plugin_entry() returns. api_version comes first and keeps its place in every
// version of this header: kernelsweep reads it, and compares it with its own kKernelApiVersion,
// before it trusts anything else the library gives.
struct PluginEntry {
  int api_version;      // kKernelApiVersion of the headers the plugin was built against
  const char* name;     // the plugin's name
  const char* version;  // the plugin's version
  // Adds the plugin's kernels and implementations to a registry, all or nothing, each marked with
  // `origin`; throws std::invalid_argument (from Registry::add) when a name is taken.
  void (*register_into)(Registry& registry, const Origin& origin);
};

// The name of the function every plugin exports.
inline constexpr const char* kPluginEntrySymbol = "kernelsweep_plugin_entry";

}  // namespace ks

// Defines the exported entry point of a plugin named NAME_STRING at VERSION_STRING (string
// literals). Once per library; kernelsweep_add_plugin writes it.
#define KS_PLUGIN_ENTRY(NAME_STRING, VERSION_STRING)                                                        \
  extern "C" __attribute__((visibility("default"))) const ::ks::PluginEntry* kernelsweep_plugin_entry() {   \
    static const ::ks::PluginEntry entry{::ks::kKernelApiVersion, NAME_STRING, VERSION_STRING,              \
                                         [](::ks::Registry& registry, const ::ks::Origin& origin) {         \
                                           ::ks::registrations_of_this_binary().apply_to(registry, origin); \
                                         }};                                                                \
    return &entry;                                                                                          \
  }
