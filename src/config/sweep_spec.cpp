#include "config/sweep_spec.h"

#include <fmt/format.h>

#include "common/printable.h"

namespace ks {
SweepFileError::SweepFileError(SourceLocation where, std::string key, std::string problem)
    : std::runtime_error(
          printable(fmt::format("{}:{}:{}: {}: {}", where.file, where.line, where.column, key, problem))),
      where_(std::move(where)),
      key_(std::move(key)),
      problem_(std::move(problem)) {}

}  // namespace ks
