#include "plan/grid_odometer.h"

#include <unordered_map>

#include <fmt/format.h>

namespace ks {

std::vector<Slot> grid_slots(const KernelBlock& block, const std::string& zip_key) {
  std::unordered_map<std::string, const Axis*> axis_by_name;
  for (const auto& axis : block.grid) axis_by_name[axis.name] = &axis;

  std::unordered_map<std::string, std::size_t> group_of_axis;
  for (std::size_t g = 0; g < block.zip.size(); ++g) {
    for (const auto& name : block.zip[g]) {
      const auto axis = axis_by_name.find(name);
      if (axis == axis_by_name.end())
        throw SweepFileError(block.where, zip_key, fmt::format("'{}' is not a grid axis", name));
      if (!group_of_axis.emplace(name, g).second)
        throw SweepFileError(block.where, zip_key, fmt::format("axis '{}' is zipped twice", name));
      const Axis& first = *axis_by_name.at(block.zip[g].front());
      if (axis->second->values.size() != first.values.size())
        throw SweepFileError(axis->second->where, zip_key,
                             fmt::format("zipped axes '{}' ({} values) and '{}' ({} values) differ in length",
                                         first.name, first.values.size(), name, axis->second->values.size()));
    }
  }

  std::vector<Slot> slots;
  std::unordered_map<std::size_t, std::size_t> slot_of_group;
  for (const auto& axis : block.grid) {
    const auto group = group_of_axis.find(axis.name);
    if (group == group_of_axis.end()) {
      slots.push_back(Slot{{&axis}, axis.values.size(), {}, {}});
      continue;
    }
    const auto [placed, is_new] = slot_of_group.emplace(group->second, slots.size());
    if (is_new) slots.push_back(Slot{{}, axis.values.size(), {}, {}});
    slots[placed->second].axes.push_back(&axis);
  }
  return slots;
}

std::uint64_t grid_combinations(const std::vector<Slot>& slots) {
  if (slots.empty()) return 0;
  std::uint64_t count = 1;
  for (const auto& slot : slots) count = saturating_multiply(count, slot.length);
  return count;
}

bool advance(std::vector<std::size_t>& position, const std::vector<Slot>& slots) {
  for (std::size_t k = slots.size(); k-- > 0;) {
    if (++position[k] < slots[k].length) return true;
    position[k] = 0;
  }
  return false;
}

Json slot_values(const std::vector<Slot>& slots, const std::vector<std::size_t>& position) {
  Json values = Json::object();
  for (std::size_t k = 0; k < slots.size(); ++k)
    for (const Axis* axis : slots[k].axes) values[axis->name] = axis->values[position[k]];
  return values;
}

}  // namespace ks
