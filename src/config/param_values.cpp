#include "config/param_values.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace ks::config {
namespace {

// A range may not expand to more values than this: a typo such as step: 1 over 1..1e9 is refused
// here instead of exhausting memory.
constexpr std::size_t kMaxRangeValues = 1'000'000;

Json scalar_json(const Scalar& value) {
  switch (value.kind) {
    case ScalarKind::null: return nullptr;
    case ScalarKind::boolean: return value.boolean;
    case ScalarKind::integer: return value.integer;
    case ScalarKind::number: return value.number;
    case ScalarKind::string: return value.text;
  }
  return nullptr;
}

// How messages show a value: strings quoted, numbers in their shortest form.
std::string shown(const Json& value) {
  if (value.is_string()) return fmt::format("'{}'", value.get<std::string>());
  if (value.is_number_float()) return fmt::format("{}", value.get<double>());
  return value.dump();
}

// How a "did you mean" names a value: a string as it is, anything else as shown.
std::string bare(const Json& value) { return value.is_string() ? value.get<std::string>() : shown(value); }

// " or 'auto'" when the parameter has special values, so the type error names every accepted form.
std::string or_special(const ParamSpec& param) {
  std::string out;
  for (const auto& special : param.special) out += " or " + shown(special);
  return out;
}

const char* type_phrase(ParamType type) {
  switch (type) {
    case ParamType::integer: return "an integer";
    case ParamType::number: return "a number";
    case ParamType::string: return "a string";
    case ParamType::boolean: return "a boolean (true or false)";
  }
  return "a value";
}

bool has_type(const Scalar& value, ParamType type) {
  switch (type) {
    case ParamType::integer: return value.kind == ScalarKind::integer;
    case ParamType::number: return value.kind == ScalarKind::integer || value.kind == ScalarKind::number;
    case ParamType::string: return value.kind == ScalarKind::string;
    case ParamType::boolean: return value.kind == ScalarKind::boolean;
  }
  return false;
}

Json converted(const Field& field, const Scalar& value, const ParamSpec& param) {
  if (!has_type(value, param.type))
    field.fail(
        fmt::format("{} takes {}{}, got {}", param.name, type_phrase(param.type), or_special(param), describe(value)));
  if (param.type == ParamType::number) return value.number;  // 1 becomes 1.0
  return scalar_json(value);
}

void check_bounds(const Field& field, const Json& value, const ParamSpec& param) {
  if (!value.is_number()) return;
  const double number = value.get<double>();
  if (param.min && number < *param.min)
    field.fail(fmt::format("{} is below the minimum {} of {}", shown(value), *param.min, param.name));
  if (param.max && number > *param.max)
    field.fail(fmt::format("{} is above the maximum {} of {}", shown(value), *param.max, param.name));
}

void check_allowed(const Field& field, const Json& value, const ParamSpec& param) {
  if (param.allowed.empty() || std::find(param.allowed.begin(), param.allowed.end(), value) != param.allowed.end())
    return;
  std::vector<std::string> allowed;
  for (const Json& choice : param.allowed) allowed.push_back(bare(choice));
  field.fail(
      fmt::format("{} is not an allowed value of {}{}", shown(value), param.name, name_hint(bare(value), allowed)));
}

AxisValues integer_range(const Field& range, const MapEntry& from_entry, const MapEntry& to_entry,
                         const MapEntry* mul_entry, const MapEntry* step_entry) {
  const std::int64_t from = from_entry.value.integer();
  const std::int64_t to = to_entry.value.integer();
  if (to < from) to_entry.value.fail(fmt::format("to ({}) is below from ({})", to, from));
  AxisValues values;
  if (step_entry) {
    const std::int64_t step = step_entry->value.integer();
    if (step <= 0) step_entry->value.fail(fmt::format("step must be > 0, got {}", step));
    // Unsigned difference: exact even when to - from overflows a signed integer. The count is
    // steps + 1, which wraps to 0 for the whole int64 range: compare the steps with the limit.
    const std::uint64_t steps =
        (static_cast<std::uint64_t>(to) - static_cast<std::uint64_t>(from)) / static_cast<std::uint64_t>(step);
    if (steps >= kMaxRangeValues)
      range.fail(fmt::format("range has {} values, more than the limit of {}",
                             static_cast<unsigned __int128>(steps) + 1, kMaxRangeValues));
    const std::uint64_t count = steps + 1;
    values.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i)
      values.emplace_back(
          static_cast<std::int64_t>(static_cast<std::uint64_t>(from) + i * static_cast<std::uint64_t>(step)));
    return values;
  }
  const std::int64_t mul = mul_entry->value.integer();
  if (mul <= 1) mul_entry->value.fail(fmt::format("mul must be > 1, got {}", mul));
  if (from <= 0) from_entry.value.fail(fmt::format("a range with mul needs from > 0, got {}", from));
  for (std::int64_t value = from;; value *= mul) {
    values.emplace_back(value);
    if (value > to / mul) break;  // the next value would pass `to` (or overflow)
  }
  return values;
}

AxisValues number_range(const Field& range, const MapEntry& from_entry, const MapEntry& to_entry,
                        const MapEntry* mul_entry, const MapEntry* step_entry) {
  const double from = from_entry.value.number();
  const double to = to_entry.value.number();
  if (to < from) to_entry.value.fail(fmt::format("to ({}) is below from ({})", to, from));
  // Values are computed as from + i*step or from * mul^i; the tolerance keeps `to` itself when
  // rounding lands it a hair beyond.
  const double slack = 1e-9;
  AxisValues values;
  if (step_entry) {
    const double step = step_entry->value.number();
    if (step <= 0) step_entry->value.fail(fmt::format("step must be > 0, got {}", step));
    const double count = (to - from) / step + 1 + slack;  // +inf when to - from overflows
    if (!(count <= static_cast<double>(kMaxRangeValues)))
      range.fail(fmt::format("range has more than the limit of {} values", kMaxRangeValues));
    values.reserve(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i)
      values.emplace_back(from + static_cast<double>(i) * step);
    return values;
  }
  const double mul = mul_entry->value.number();
  if (mul <= 1) mul_entry->value.fail(fmt::format("mul must be > 1, got {}", mul));
  if (from <= 0) from_entry.value.fail(fmt::format("a range with mul needs from > 0, got {}", from));
  for (double value = from; value <= to * (1 + slack); value *= mul) {
    if (values.size() == kMaxRangeValues)
      range.fail(fmt::format("range has more than the limit of {} values", kMaxRangeValues));
    values.emplace_back(value);
  }
  return values;
}

AxisValues range_values(const Field& field, const ParamSpec& param) {
  const MapFields range(field, {"from", "to", "mul", "step"}, "range key");
  if (param.type != ParamType::integer && param.type != ParamType::number)
    field.fail(
        fmt::format("a range needs an integer or number parameter; {} takes {}", param.name, type_phrase(param.type)));
  const MapEntry& from = range.require("from");
  const MapEntry& to = range.require("to");
  const MapEntry* mul = range.find("mul");
  const MapEntry* step = range.find("step");
  if (mul && step) {
    const auto position = [](const MapEntry* e) { return std::pair(e->key.where().line, e->key.where().column); };
    (position(mul) > position(step) ? mul : step)->key.fail("a range takes mul or step, not both");
  }
  if (!mul && !step) field.fail("a range needs mul or step: {from, to, mul} or {from, to, step}");
  AxisValues values = param.type == ParamType::integer ? integer_range(field, from, to, mul, step)
                                                       : number_range(field, from, to, mul, step);
  // Every value lies between from and to, so their bounds are the range's.
  check_bounds(from.value, values.front(), param);
  check_bounds(to.value, values.back(), param);
  for (const auto& value : values) check_allowed(field, value, param);
  return values;
}

}  // namespace

Json parameter_value(const Field& field, const ParamSpec& param) {
  const Scalar value = field.scalar();
  const Json as_written = scalar_json(value);
  // Special values (chunk_size: auto) are compared as written, before any type conversion.
  for (const auto& special : param.special)
    if (special == as_written) return special;
  Json out = converted(field, value, param);
  check_bounds(field, out, param);
  check_allowed(field, out, param);
  return out;
}

AxisValues axis_values(const Field& field, const ParamSpec& param) {
  if (field.is_map()) return range_values(field, param);
  if (!field.is_list())
    field.fail("expected a list of values or a range {from, to, mul} / {from, to, step}; one value goes under fixed");
  AxisValues values;
  for (const Field& element : field.elements()) values.push_back(parameter_value(element, param));
  return values;
}

}  // namespace ks::config
