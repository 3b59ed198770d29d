#pragma once
// YAML sweep file -> SweepSpec, checked against the kernel registry. Throws SweepFileError.
#include <string>

#include "config/sweep_spec.h"
#include "kernels/kernel.h"

namespace ks {

SweepSpec load_sweep_file(const std::string& path, const Registry& registry);
// The same from text already read; `path` is only used in error messages.
SweepSpec parse_sweep_text(const std::string& text, const std::string& path, const Registry& registry);

}  // namespace ks
