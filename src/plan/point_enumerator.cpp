#include "plan/point_enumerator.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "common/canonical_json.h"
#include "common/digest.h"
#include "plan/grid_odometer.h"

namespace ks {
namespace {

std::string block_key(std::size_t block_index) { return fmt::format("kernels[{}]", block_index); }

const KernelSpec& find_kernel(const KernelBlock& block, std::size_t block_index, const Registry& registry) {
  const KernelSpec* kernel = registry.find(block.kernel);
  if (!kernel) {
    throw SweepFileError(
        block.where, block_key(block_index) + ".kernel",
        fmt::format("unknown kernel '{}' (known: {})", block.kernel, fmt::join(registry.names(), ", ")));
  }
  return *kernel;
}

// The block's implementations, or all of the kernel's when the block lists none.
std::vector<std::string> resolve_implementations(const KernelBlock& block, std::size_t block_index,
                                                 const KernelSpec& kernel) {
  if (block.implementations.empty()) {
    std::vector<std::string> all;
    for (const auto& implementation : kernel.implementations) all.push_back(implementation.name);
    return all;
  }
  for (const auto& name : block.implementations)
    if (!kernel.implementation(name))
      throw SweepFileError(block.where, block_key(block_index) + ".implementations",
                           fmt::format("kernel '{}' has no implementation '{}'", kernel.name, name));
  return block.implementations;
}

// The block's modes, or all of the kernel's when the block lists none.
std::vector<std::string> resolve_modes(const KernelBlock& block, std::size_t block_index, const KernelSpec& kernel) {
  if (block.modes.empty()) return kernel.modes;
  for (const auto& mode : block.modes)
    if (!kernel.has_mode(mode))
      throw SweepFileError(block.where, block_key(block_index) + ".modes",
                           fmt::format("kernel '{}' has no mode '{}'", kernel.name, mode));
  return block.modes;
}

void require_known_parameters(const Json& values, const KernelSpec& kernel, const KernelBlock& block,
                              const std::string& key) {
  for (const auto& [name, value] : values.items())
    if (!kernel.parameter(name))
      throw SweepFileError(block.where, key + "." + name,
                           fmt::format("kernel '{}' has no parameter '{}'", kernel.name, name));
}

// Does a rule's value (one value, or a list of values) accept the point's value?
bool rule_value_matches(const Json& expected, const Json& actual) {
  return expected.is_array() ? std::find(expected.begin(), expected.end(), actual) != expected.end()
                             : expected == actual;
}

bool rule_matches(const Json& rule, const std::string& implementation, const std::string& mode, const Json& params) {
  for (const auto& [key, expected] : rule.items()) {
    const bool matches = key == "implementation" ? rule_value_matches(expected, implementation)
                         : key == "mode"         ? rule_value_matches(expected, mode)
                                                 : params.contains(key) && rule_value_matches(expected, params.at(key));
    if (!matches) return false;
  }
  return true;
}

// The parser checks these too; the planner repeats the cheap checks so that a SweepSpec built in code
// (tests, tools) cannot produce points of parameters the kernel does not have.
void check_block_keys(const KernelBlock& block, std::size_t block_index, const KernelSpec& kernel) {
  const std::string key = block_key(block_index);
  require_known_parameters(block.fixed, kernel, block, key + ".fixed");
  for (std::size_t j = 0; j < block.include.size(); ++j) {
    const std::string include_key = fmt::format("{}.include[{}]", key, j);
    if (!block.include[j].is_object())
      throw SweepFileError(block.where, include_key, "must be a map of parameter to value");
    require_known_parameters(block.include[j], kernel, block, include_key);
  }
  for (std::size_t j = 0; j < block.exclude.size(); ++j) {
    const Json& rule = block.exclude[j];
    const std::string rule_key = fmt::format("{}.exclude[{}]", key, j);
    if (!rule.is_object() || rule.empty())
      throw SweepFileError(block.where, rule_key, "must be a non-empty map of key to value or list of values");
    for (const auto& [name, value] : rule.items())
      if (name != "implementation" && name != "mode" && !kernel.parameter(name))
        throw SweepFileError(block.where, rule_key + "." + name,
                             fmt::format("not a parameter of kernel '{}', 'implementation' or 'mode'", kernel.name));
  }
}

}  // namespace

// A kernel block resolved against the registry, with what it takes to answer "does this block
// hold that point?" without enumerating it.
struct PointEnumerator::Block {
  const KernelBlock& spec;
  std::size_t index;
  const KernelSpec& kernel;
  std::vector<std::string> implementations;
  std::vector<std::string> modes;
  std::vector<Slot> slots;
  std::uint64_t combinations = 0;  // of the grid
  // Whether a slot holds the same values twice: found by find_repeats() when a walk first reaches the
  // block, so that a sweep refused for its size never hashes its grid.
  std::optional<bool> grid_repeats;
  // The canonical text of every parameter that is not a grid axis, as the grid's points have it
  // (fixed, else the default); nothing when a required parameter has no value.
  std::optional<std::unordered_map<std::string, std::string>> grid_constants;
  std::vector<const Block*> earlier_of_kernel;  // the blocks before it of the same kernel
  // The canonical parameters of the include entries reached so far in the walk, each with the first
  // entry that has them.
  std::unordered_map<std::string, std::size_t> includes_reached;

  Block(const KernelBlock& block, std::size_t block_index, const KernelSpec& kernel_spec)
      : spec(block),
        index(block_index),
        kernel(kernel_spec),
        implementations(resolve_implementations(block, block_index, kernel_spec)),
        modes(resolve_modes(block, block_index, kernel_spec)) {
    check_block_keys(block, block_index, kernel_spec);
    slots = grid_slots(block, block_key(block_index) + ".zip");
    combinations = grid_combinations(slots);
    grid_constants.emplace();
    for (const auto& parameter : kernel.parameters) {
      if (std::ranges::any_of(block.grid, [&](const Axis& axis) { return axis.name == parameter.name; })) continue;
      if (block.fixed.contains(parameter.name)) {
        (*grid_constants)[parameter.name] = canonical_json(block.fixed.at(parameter.name));
      } else if (!parameter.default_value.is_null()) {
        (*grid_constants)[parameter.name] = canonical_json(parameter.default_value);
      } else {
        grid_constants.reset();
        break;
      }
    }
  }

  // Every parameter of the kernel: the given values, then the block's fixed values, then defaults.
  Json complete_parameters(const Json& given) const {
    Json params = Json::object();
    for (const auto& parameter : kernel.parameters) {
      if (given.contains(parameter.name)) {
        params[parameter.name] = given.at(parameter.name);
      } else if (spec.fixed.contains(parameter.name)) {
        params[parameter.name] = spec.fixed.at(parameter.name);
      } else if (!parameter.default_value.is_null()) {
        params[parameter.name] = parameter.default_value;
      } else {
        throw SweepFileError(spec.where, block_key(index) + "." + parameter.name,
                             fmt::format("required parameter of kernel '{}' is missing", kernel.name));
      }
    }
    return params;
  }

  // The kernel's cross-parameter constraints; its problem comes back as "key: what is wrong".
  void validate(const Json& params) const {
    if (!kernel.validate) return;
    const auto problem = kernel.validate(Parameters(params));
    if (!problem) return;
    std::string key = block_key(index);
    std::string what = *problem;
    if (const auto colon = problem->find(": "); colon != std::string::npos) {
      key += "." + problem->substr(0, colon);
      what = problem->substr(colon + 2);
    }
    throw SweepFileError(spec.where, key, fmt::format("{} (parameters {})", what, params.dump()));
  }

  bool excluded(const std::string& implementation, const std::string& mode, const Json& params) const {
    return std::ranges::any_of(spec.exclude,
                               [&](const Json& rule) { return rule_matches(rule, implementation, mode, params); });
  }

  void find_repeats() {
    if (grid_repeats) return;
    grid_repeats = false;
    for (Slot& slot : slots) {
      slot.find_repeats();
      grid_repeats = *grid_repeats || !slot.repeats.empty();
    }
  }

  // Whether an include entry before `entry` has these parameters.
  bool earlier_include_has(const std::string& params_text, std::size_t entry) const {
    const auto first = includes_reached.find(params_text);
    return first != includes_reached.end() && first->second < entry;
  }

  // The grid position of a combination number: the odometer read backwards, the last slot fastest.
  std::vector<std::size_t> grid_position(std::uint64_t combination) const {
    std::vector<std::size_t> position(slots.size(), 0);
    for (std::size_t k = slots.size(); k-- > 0;) {
      position[k] = combination % slots[k].length;
      combination /= slots[k].length;
    }
    return position;
  }

  // Whether a grid position is the first of the positions with its values.
  bool first_position(const std::vector<std::size_t>& position) const {
    for (std::size_t k = 0; k < slots.size(); ++k)
      if (slots[k].repeats.contains(position[k])) return false;
    return true;
  }

  bool grid_holds(const Json& params) const {
    if (combinations == 0 || !grid_constants) return false;
    for (const Slot& slot : slots) {
      const auto text = slot.text_in(params);
      if (!text || !slot.holds(*text)) return false;
    }
    for (const auto& [name, text] : *grid_constants) {
      const auto value = params.find(name);
      if (value == params.end() || canonical_json(*value) != text) return false;
    }
    return true;
  }

  // Whether the block, walked to its end already, has this point.
  bool holds(const std::string& implementation, const std::string& mode, const Json& params,
             const std::string& params_text) const {
    if (std::ranges::find(implementations, implementation) == implementations.end() ||
        std::ranges::find(modes, mode) == modes.end() || excluded(implementation, mode, params))
      return false;
    return grid_holds(params) || includes_reached.contains(params_text);
  }

  // Nothing can drop a grid point: its points are counted by multiplying.
  bool grid_is_dense() const {
    return spec.exclude.empty() && !kernel.validate && earlier_of_kernel.empty() && !grid_repeats.value();
  }
};

// One pass over the blocks in plan order: counts the points, and makes and visits them when given a
// visitor.
class PointEnumerator::Walk {
 public:
  explicit Walk(const PointVisitor* visit) : visit_(visit) {}

  std::uint64_t run(const std::vector<std::unique_ptr<Block>>& blocks) {
    for (auto block = blocks.begin(); block != blocks.end() && !stopped_; ++block) walk_block(**block);
    return points_;
  }

  // The points of one group, made again from where they come from.
  void make_group(const Block& block, const PointSource& where) {
    const bool from_grid = where.combination < block.combinations;
    std::vector<std::size_t> position;
    Source source{nullptr, 0, where.combination};
    Json given;
    if (from_grid) {
      position = block.grid_position(where.combination);
      source.position = &position;
      given = slot_values(block.slots, position);
    } else {
      source.include = static_cast<std::size_t>(where.combination - block.combinations);
      given = block.spec.include.at(source.include);
    }
    Json params = block.complete_parameters(given);
    bool validated = false;
    std::optional<std::string> params_text;
    walk_group(block, params, source, where.implementation, true, validated, params_text);
  }

 private:
  // Where a parameter combination comes from: a grid position, or an include entry.
  struct Source {
    const std::vector<std::size_t>* position = nullptr;  // grid
    std::size_t include = 0;
    std::uint64_t combination = 0;  // PointSource::combination
  };

  void walk_block(Block& block) {
    block.find_repeats();
    block.includes_reached.clear();
    if (block.combinations > 0) {
      std::vector<std::size_t> position(block.slots.size(), 0);
      if (!visit_ && block.grid_is_dense()) {
        block.complete_parameters(slot_values(block.slots, position));  // a missing required parameter
        points_ = saturating_add(
            points_, saturating_multiply(block.combinations, block.implementations.size() * block.modes.size()));
      } else {
        std::uint64_t combination = 0;
        do
          walk_combination(block, block.complete_parameters(slot_values(block.slots, position)),
                           {&position, 0, combination++});
        while (!stopped_ && advance(position, block.slots));
      }
    }
    for (std::size_t j = 0; j < block.spec.include.size() && !stopped_; ++j) {
      const Json params = block.complete_parameters(block.spec.include[j]);
      walk_combination(block, Json(params), {nullptr, j, block.combinations + j});
      block.includes_reached.emplace(canonical_json(params), j);
    }
  }

  // One parameter combination: a group per implementation, a point per mode in it. Its last point
  // takes `params` (a plan of one implementation and one mode copies none).
  void walk_combination(const Block& block, Json params, const Source& source) {
    bool validated = false;
    std::optional<std::string> params_text;
    for (std::size_t i = 0; i < block.implementations.size() && !stopped_; ++i)
      walk_group(block, params, source, i, i + 1 == block.implementations.size(), validated, params_text);
  }

  // The modes of one implementation of a combination. The kernel's validator runs only for
  // combinations that keep a point, so an exclude rule can remove combinations it refuses. With
  // `last_use`, the point of the last mode takes `params`, which nothing reads after it.
  void walk_group(const Block& block, Json& params, const Source& source, std::size_t implementation_index,
                  bool last_use, bool& validated, std::optional<std::string>& params_text) {
    const std::string& implementation = block.implementations.at(implementation_index);
    bool group_open = false;
    for (const auto& mode : block.modes) {
      if (block.excluded(implementation, mode, params)) continue;
      if (!validated) block.validate(params);
      validated = true;
      if (repeated(block, source, implementation, mode, params, params_text)) continue;
      ++points_;
      if (!visit_) continue;
      if (!group_open) ++groups_;
      group_open = true;
      Point point;
      point.index = points_ - 1;
      point.kernel = block.kernel.name;
      point.implementation = implementation;
      point.mode = mode;
      if (last_use && &mode == &block.modes.back()) point.params = std::move(params);
      else point.params = params;
      point.timeout_s = block.spec.timeout_s;
      point.key = point_digest(point);
      point.source = {static_cast<std::uint32_t>(block.index), static_cast<std::uint32_t>(implementation_index),
                      source.combination};
      if (!(*visit_)(point, groups_ - 1)) {
        stopped_ = true;
        return;
      }
    }
  }

  // Whether a source before this one in the plan has the point already: the first occurrence keeps
  // its place.
  static bool repeated(const Block& block, const Source& source, const std::string& implementation,
                       const std::string& mode, const Json& params, std::optional<std::string>& params_text) {
    const auto text = [&]() -> const std::string& {
      if (!params_text) params_text = canonical_json(params);
      return *params_text;
    };
    if (source.position) {
      if (block.grid_repeats.value() && !block.first_position(*source.position)) return true;
    } else if (block.grid_holds(params) || block.earlier_include_has(text(), source.include)) {
      return true;
    }
    for (const Block* earlier : block.earlier_of_kernel)
      if (earlier->holds(implementation, mode, params, text())) return true;
    return false;
  }

  const PointVisitor* visit_;
  std::uint64_t points_ = 0;
  std::size_t groups_ = 0;
  bool stopped_ = false;
};

PointEnumerator::PointEnumerator(const SweepSpec& spec, const Registry& registry) {
  for (std::size_t i = 0; i < spec.kernels.size(); ++i) {
    const KernelBlock& block = spec.kernels[i];
    auto resolved = std::make_unique<Block>(block, i, find_kernel(block, i, registry));
    for (const auto& earlier : blocks_)
      if (&earlier->kernel == &resolved->kernel) resolved->earlier_of_kernel.push_back(earlier.get());
    blocks_.push_back(std::move(resolved));
  }
}

PointEnumerator::~PointEnumerator() = default;

std::uint64_t PointEnumerator::upper_bound() const {
  std::uint64_t total = 0;
  for (const auto& block : blocks_) {
    const std::uint64_t combinations = saturating_add(block->combinations, block->spec.include.size());
    const std::uint64_t variants = saturating_multiply(block->implementations.size(), block->modes.size());
    total = saturating_add(total, saturating_multiply(combinations, variants));
  }
  return total;
}

void PointEnumerator::for_each(const PointVisitor& visit) { Walk(&visit).run(blocks_); }

std::uint64_t PointEnumerator::count() { return Walk(nullptr).run(blocks_); }

std::vector<Point> PointEnumerator::group_at(const PointSource& source) const {
  if (source.block >= blocks_.size() || source.implementation >= blocks_[source.block]->implementations.size() ||
      source.combination >= blocks_[source.block]->combinations + blocks_[source.block]->spec.include.size())
    throw std::out_of_range(fmt::format("no group at kernels[{}], implementation {}, combination {}", source.block,
                                        source.implementation, source.combination));
  std::vector<Point> points;
  const PointVisitor collect = [&points](Point& point, std::size_t) {
    points.push_back(std::move(point));
    return true;
  };
  Walk(&collect).make_group(*blocks_[source.block], source);
  return points;
}

}  // namespace ks
