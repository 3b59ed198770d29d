#pragma once
// YAML sweep file -> SweepSpec, checked against the kernel registry. Throws SweepFileError.
#include <string>

#include "config/sweep_spec.h"
#include "kernels/kernel.h"

namespace ks {

// A sweep file's text. Throws SweepFileError when it cannot be read.
std::string read_sweep_file(const std::string& path);

// The plugins the text's `plugins:` list names. The caller loads them into the registry before
// parsing the rest, whose kernels may come from them. Throws SweepFileError (bad YAML, a list that is
// not one of non-empty strings).
std::vector<PluginReference> plugin_references(const std::string& text, const std::string& path);

// The text's `python:` section (modules, path, interpreter), loaded like plugins before the rest.
// Throws SweepFileError.
PythonReferences python_references(const std::string& text, const std::string& path);

// The whole sweep; `path` is only used in error messages.
SweepSpec parse_sweep_text(const std::string& text, const std::string& path, const Registry& registry);
// read_sweep_file, then parse_sweep_text.
SweepSpec load_sweep_file(const std::string& path, const Registry& registry);

}  // namespace ks
