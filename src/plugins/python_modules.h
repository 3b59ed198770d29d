#pragma once
// Kernels and implementations declared in Python (python/kernelsweep, docs/python.md): what a sweep
// file's `python:` section or --python-module names is described by `python3 -m kernelsweep.describe`
// and registered like a plugin's kernels, so that `kernels`, `validate`, `plan` and `run` know them.
// Their points are measured by the Python worker (`python3 -m kernelsweep.worker`).
#include <string>
#include <vector>

#include "kernels/kernel.h"

namespace ks {

// How the Python worker (and describe) are started.
struct PythonSetup {
  std::string interpreter;           // empty: KERNELSWEEP_PYTHON, else python3
  std::vector<std::string> modules;  // modules of kernels the worker imports, in order
  std::vector<std::string> path;     // folders put first on its PYTHONPATH (absolute)

  // Adds another setup's modules and folders (each once); its interpreter where this one names none.
  void add(const PythonSetup& other);
  // The interpreter to run.
  std::string interpreter_to_run() const;
  // The PYTHONPATH it runs with: `path`, kernelsweep's own package folder, then the caller's PYTHONPATH.
  std::string python_path() const;
  // The environment of a child that runs it (this process's, PYTHONPATH replaced), as "KEY=VALUE".
  std::vector<std::string> environment() const;
};

// Describes `setup.modules` and registers their kernels and implementations into `registry`, all or
// nothing: each kernel's origin names its module, version, source file and the file's SHA-256, and
// each implementation runs in the Python worker. Throws PluginError with one line (the module and the
// Python exception's last line) when a module cannot be imported or declares a name already taken.
void load_python_modules(const PythonSetup& setup, Registry& registry);

}  // namespace ks
