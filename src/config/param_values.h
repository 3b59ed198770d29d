#pragma once
// A kernel parameter's values as a sweep file gives them: one value, a list, or a range. Each value
// is converted to the parameter's type (an integer stays an integer, a number becomes a double) and
// checked against its special values, bounds and allowed values. Internal to src/config.
#include <cstddef>
#include <vector>

#include "config/sweep_spec.h"
#include "config/yaml_field.h"
#include "kernels/kernel.h"

namespace ks::config {

// A range may not expand to more values than this: a typo such as step: 1 over 1..1e9 is refused
// here instead of exhausting memory.
inline constexpr std::size_t kMaxRangeValues = 1'000'000;

// One value of `param`.
Json parameter_value(const Field& field, const ParamSpec& param);

// A grid axis: a non-empty list of values, or a range {from, to, mul} / {from, to, step}.
AxisValues axis_values(const Field& field, const ParamSpec& param);

}  // namespace ks::config
