#pragma once
// A kernel parameter's values as a sweep file gives them: one value, a list, or a range. Each value
// is converted to the parameter's type (an integer stays an integer, a number becomes a double) and
// checked against its special values, bounds and allowed values. Internal to src/config.
#include "config/sweep_spec.h"
#include "config/yaml_field.h"
#include "kernels/kernel.h"

namespace ks::config {

// One value of `param`.
Json parameter_value(const Field& field, const ParamSpec& param);

// A grid axis: a non-empty list of values, or a range {from, to, mul} / {from, to, step}.
AxisValues axis_values(const Field& field, const ParamSpec& param);

}  // namespace ks::config
