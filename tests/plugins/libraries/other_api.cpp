// The entry of a plugin built against another kernel API, written out by hand: only api_version
// may be read, so the rest is left empty (a loader that read it would fail on it).
#include "kernels/plugin.h"

extern "C" __attribute__((visibility("default"))) const ks::PluginEntry* kernelsweep_plugin_entry() {
  static const ks::PluginEntry entry{ks::kKernelApiVersion + 1, nullptr, nullptr, nullptr};
  return &entry;
}
