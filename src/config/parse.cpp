#include "config/parse.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "config/param_values.h"
#include "config/yaml_field.h"

namespace ks {
namespace {

using config::Field;
using config::MapEntry;
using config::MapFields;

const std::vector<std::string> kTopKeys{"name", "plugins", "python", "protocol", "kernels", "output"};
const std::vector<std::string> kPythonKeys{"modules", "path", "interpreter"};
const std::vector<std::string> kProtocolKeys{"name",
                                             "warmup_ms",
                                             "rep_ms",
                                             "min_repeat",
                                             "max_repeat",
                                             "flush_bytes",
                                             "quantiles",
                                             "max_noise",
                                             "min_samples",
                                             "min_time_s",
                                             "timeout_s",
                                             "throttle_threshold",
                                             "throttle_pause_s",
                                             "replays",
                                             "repetitions",
                                             "sm_clock_per_sample",
                                             "energy"};
const std::vector<std::string> kKernelKeys{"kernel", "implementations", "modes",  "timeout_s", "grid", "fixed",
                                           "zip",    "include",         "exclude"};
const std::vector<std::string> kOutputKeys{"directory",
                                           "results_file",
                                           "kernelindex_format",
                                           "kernelindex_compression",
                                           "kernelindex_json_max_points",
                                           "kernelindex_shard_mb"};
const std::vector<std::string> kProtocolNames{"do_bench", "cold", "graph"};
// The keys of each protocol besides those every protocol takes.
const std::vector<std::string> kKeysOfEveryProtocol{"name", "flush_bytes", "quantiles", "repetitions", "energy"};
const std::map<std::string, std::vector<std::string>> kKeysOfProtocol{
    {"do_bench", {"warmup_ms", "rep_ms", "min_repeat", "max_repeat", "sm_clock_per_sample"}},
    {"cold", {"max_noise", "min_samples", "min_time_s", "timeout_s", "throttle_threshold", "throttle_pause_s"}},
    {"graph", {"rep_ms", "max_repeat", "replays", "sm_clock_per_sample"}},
};
const std::vector<std::string> kKernelindexFormats{"auto", "json", "jsonl"};
const std::vector<std::string> kKernelindexCompressions{"none", "gzip", "zstd"};

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// --- scalars with constraints -------------------------------------------------------------------

// Upper bounds that no real sweep reaches, and past which the timing arithmetic (durations in
// integer nanoseconds, sample buffers) would overflow or run a point into its timeout at once.
constexpr double kMaxProtocolMs = 3'600'000;         // an hour of warm-up or of repetitions
constexpr std::int64_t kMaxRepeat = 10'000'000;      // 80 MB of samples for one point
constexpr std::int64_t kMaxRepetitions = 1000;       // measurements of each point
constexpr std::int64_t kMaxFlushBytes = 64LL << 30;  // 64 GiB
constexpr double kMaxTimeoutS = 7 * 24 * 3600;       // a week
constexpr std::int64_t kMaxShardMb = 1 << 20;        // a TiB

template <class Number> Number at_most(const Field& field, Number value, Number most) {
  if (value > most) field.fail(fmt::format("must be <= {}, got {}", most, value));
  return value;
}

double positive_number(const Field& field, double most) {
  const double value = field.number();
  if (value <= 0) field.fail(fmt::format("must be > 0, got {}", value));
  return at_most(field, value, most);
}

double non_negative_number(const Field& field, double most) {
  const double value = field.number();
  if (value < 0) field.fail(fmt::format("must be >= 0, got {}", value));
  return at_most(field, value, most);
}

std::int64_t integer_in(const Field& field, std::int64_t least,
                        std::int64_t most = std::numeric_limits<std::int64_t>::max()) {
  const std::int64_t value = field.integer();
  if (value < least) field.fail(fmt::format("must be >= {}, got {}", least, value));
  return at_most(field, value, most);
}

std::string non_empty_string(const Field& field) {
  std::string value = field.string();
  if (value.empty()) field.fail("must not be empty");
  return value;
}

std::string one_of(const Field& field, const std::vector<std::string>& choices, const std::string& noun) {
  std::string value = field.string();
  if (!contains(choices, value)) field.fail(config::unknown_name(noun, value, choices));
  return value;
}

// The sweep's name ends up in file names (NAME.h5), so it keeps to characters every file system takes.
std::string sweep_name(const Field& field) {
  std::string value = non_empty_string(field);
  const bool portable = std::all_of(value.begin(), value.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  });
  if (!portable) field.fail(fmt::format("'{}' is not a valid name: use only letters, digits, '_', '.' and '-'", value));
  return value;
}

// --- protocol and output --------------------------------------------------------------------------

std::vector<double> quantiles(const Field& field) {
  std::vector<double> out;
  for (const Field& element : field.elements()) {
    const double q = element.number();
    if (q < 0 || q > 1) element.fail(fmt::format("a quantile lies in [0, 1], got {}", q));
    out.push_back(q);
  }
  return out;
}

// A key that another protocol takes is an error, not a value silently unused.
void refuse_keys_of_other_protocols(const MapFields& map, const std::string& name) {
  const std::vector<std::string>& own = kKeysOfProtocol.at(name);
  for (const MapEntry& entry : map.entries()) {
    if (contains(kKeysOfEveryProtocol, entry.name) || contains(own, entry.name)) continue;
    std::string takers;
    for (const auto& [protocol, keys] : kKeysOfProtocol)
      if (contains(keys, entry.name)) takers += (takers.empty() ? "" : " and ") + protocol;
    entry.key.fail(fmt::format("'{}' is a key of protocol {}, not of {}", entry.name, takers, name));
  }
}

ProtocolSpec read_protocol(const Field& field) {
  const MapFields map(field, kProtocolKeys);
  ProtocolSpec protocol;
  ColdRule& cold = protocol.cold;
  if (const auto* e = map.find("name")) protocol.name = one_of(e->value, kProtocolNames, "protocol");
  refuse_keys_of_other_protocols(map, protocol.name);
  if (const auto* e = map.find("warmup_ms")) protocol.warmup_ms = non_negative_number(e->value, kMaxProtocolMs);
  // rep_ms 0: min_repeat timed calls
  if (const auto* e = map.find("rep_ms")) protocol.rep_ms = non_negative_number(e->value, kMaxProtocolMs);
  if (const auto* e = map.find("max_repeat")) protocol.max_repeat = integer_in(e->value, 1, kMaxRepeat);
  if (const auto* e = map.find("min_repeat")) {
    protocol.min_repeat = integer_in(e->value, 1);
    if (*protocol.min_repeat > protocol.max_repeat)
      e->value.fail(fmt::format("must be <= max_repeat ({}), got {}", protocol.max_repeat, *protocol.min_repeat));
  }
  if (const auto* e = map.find("flush_bytes")) protocol.flush_bytes = integer_in(e->value, 0, kMaxFlushBytes);
  if (const auto* e = map.find("quantiles")) protocol.quantiles = quantiles(e->value);
  if (const auto* e = map.find("max_noise")) cold.max_noise = positive_number(e->value, 1.0);
  if (const auto* e = map.find("min_samples")) cold.min_samples = integer_in(e->value, 2, kMaxRepeat);
  if (const auto* e = map.find("min_time_s")) cold.min_time_s = non_negative_number(e->value, kMaxProtocolMs / 1e3);
  if (const auto* e = map.find("timeout_s")) cold.timeout_s = positive_number(e->value, kMaxProtocolMs / 1e3);
  if (const auto* e = map.find("throttle_threshold")) cold.throttle_threshold = non_negative_number(e->value, 1.0);
  if (const auto* e = map.find("throttle_pause_s")) cold.throttle_pause_s = non_negative_number(e->value, 60.0);
  if (const auto* e = map.find("repetitions")) protocol.repetitions = integer_in(e->value, 1, kMaxRepetitions);
  if (const auto* e = map.find("sm_clock_per_sample")) protocol.sm_clock_per_sample = e->value.boolean();
  if (const auto* e = map.find("energy")) protocol.energy = e->value.boolean();
  if (const auto* e = map.find("replays")) protocol.replays = integer_in(e->value, 1, kMaxRepeat);
  return protocol;
}

// The sweep file says where results go inside the folder it is run from; a place outside it (an
// absolute path, ..) is for the command line to give. Control characters would reach file names
// and messages.
std::string without_control_characters(const Field& field) {
  std::string value = non_empty_string(field);
  for (const char c : value)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      field.fail(fmt::format("must not hold control characters (found character {})", static_cast<int>(c)));
  return value;
}

std::string output_directory(const Field& field) {
  std::string value = without_control_characters(field);
  const std::filesystem::path path(value);
  if (path.is_absolute())
    field.fail(fmt::format(
        "'{}' is absolute: a sweep file names a folder below where it is run (--output-dir takes any)", value));
  for (const auto& part : path)
    if (part == "..")
      field.fail(fmt::format("'{}' leaves the folder it is run from (..): --output-dir takes any folder", value));
  return value;
}

std::string results_file_name(const Field& field) {
  std::string value = without_control_characters(field);
  if (value.find('/') != std::string::npos || value == "." || value == "..")
    field.fail(fmt::format(
        "'{}' is not a file name: the results file goes in output.directory (--results-file takes a path)", value));
  return value;
}

OutputSpec read_output(const Field& field) {
  const MapFields map(field, kOutputKeys);
  OutputSpec output;
  if (const MapEntry* e = map.find("directory")) output.directory = output_directory(e->value);
  if (const MapEntry* e = map.find("results_file")) output.results_file = results_file_name(e->value);
  if (const MapEntry* e = map.find("kernelindex_format"))
    output.kernelindex_format = one_of(e->value, kKernelindexFormats, "kernelindex_format");
  if (const MapEntry* e = map.find("kernelindex_compression"))
    output.kernelindex_compression = one_of(e->value, kKernelindexCompressions, "kernelindex_compression");
  if (const MapEntry* e = map.find("kernelindex_json_max_points"))
    output.kernelindex_json_max_points = static_cast<std::uint64_t>(integer_in(e->value, 0));
  if (const MapEntry* e = map.find("kernelindex_shard_mb"))
    output.kernelindex_shard_mb = static_cast<std::uint64_t>(integer_in(e->value, 1, kMaxShardMb));
  return output;
}

// --- kernel blocks --------------------------------------------------------------------------------

// The names of a kernel's parameters or implementations, of a block's grid axes.
template <class Named> std::vector<std::string> names_of(const std::vector<Named>& items) {
  std::vector<std::string> names;
  for (const Named& item : items) names.push_back(item.name);
  return names;
}

const KernelSpec& find_kernel(const Field& field, const Registry& registry) {
  const std::string name = field.string();
  const KernelSpec* kernel = registry.find(name);
  if (!kernel) field.fail(config::unknown_name("kernel", name, registry.names()));
  return *kernel;
}

// implementations: / modes: a non-empty list of distinct names the kernel has, in the order given.
std::vector<std::string> chosen_names(const Field& field, const std::vector<std::string>& available,
                                      const std::string& noun, const std::string& kernel) {
  std::vector<std::string> chosen;
  for (const Field& element : field.elements()) {
    const std::string name = element.string();
    if (!contains(available, name)) element.fail(config::unknown_name(noun, name, available, kernel));
    if (contains(chosen, name)) element.fail(fmt::format("{} '{}' is listed twice", noun, name));
    chosen.push_back(name);
  }
  return chosen;
}

const Axis* find_axis(const KernelBlock& block, const std::string& name) {
  const auto axis = std::ranges::find(block.grid, name, &Axis::name);
  return axis == block.grid.end() ? nullptr : &*axis;
}

void read_grid(const Field& field, const KernelSpec& kernel, KernelBlock& block) {
  const MapFields grid(field, names_of(kernel.parameters), "parameter", kernel.name);
  if (grid.empty()) field.fail("empty grid: give at least one axis, or leave grid out and list points under include");
  for (const MapEntry& e : grid.entries())
    block.grid.push_back({e.name, config::axis_values(e.value, *kernel.parameter(e.name)), e.key.where()});
}

void read_fixed(const Field& field, const KernelSpec& kernel, KernelBlock& block) {
  const MapFields fixed(field, names_of(kernel.parameters), "parameter", kernel.name);
  if (fixed.empty()) field.fail("empty map: leave fixed out when no parameter is fixed");
  for (const MapEntry& e : fixed.entries()) {
    if (const Axis* axis = find_axis(block, e.name))
      e.key.fail(fmt::format("'{}' is also a grid axis (line {}); a parameter is either in grid or fixed", e.name,
                             axis->where.line));
    if (e.value.is_list()) e.value.fail("fixed takes one value per parameter; a list of values goes under grid");
    block.fixed[e.name] = config::parameter_value(e.value, *kernel.parameter(e.name));
  }
}

// Each group names grid axes of equal length that advance together; an axis is in one group at most.
void read_zip(const Field& field, KernelBlock& block) {
  for (const Field& group_field : field.elements()) {
    const std::vector<Field> members = group_field.elements();
    if (members.size() < 2) group_field.fail("a zip group names at least two grid axes");
    std::vector<std::string> group;
    for (const Field& member : members) {
      const std::string name = member.string();
      const Axis* axis = find_axis(block, name);
      if (!axis)
        member.fail(fmt::format("'{}' is not a grid axis{}", name, config::name_hint(name, names_of(block.grid))));
      for (std::size_t g = 0; g < block.zip.size(); ++g)
        if (contains(block.zip[g], name)) member.fail(fmt::format("'{}' is already in zip group {}", name, g));
      if (contains(group, name)) member.fail(fmt::format("'{}' is listed twice in this zip group", name));
      const Axis& first = *find_axis(block, group.empty() ? name : group.front());
      if (axis->values.size() != first.values.size())
        member.fail(fmt::format("'{}' has {} values but '{}' has {}; zipped axes need equal lengths", name,
                                axis->values.size(), first.name, first.values.size()));
      group.push_back(name);
    }
    block.zip.push_back(std::move(group));
  }
}

void require_parameter(const Field& field, const ParamSpec& param, const Json& given, const KernelBlock& block) {
  if (param.default_value.is_null() && !given.contains(param.name) && !block.fixed.contains(param.name))
    field.fail(fmt::format("parameter '{}' has no default: give it here or under fixed", param.name));
}

void read_include(const Field& field, const KernelSpec& kernel, KernelBlock& block) {
  for (const Field& entry : field.elements()) {
    const MapFields point(entry, names_of(kernel.parameters), "parameter", kernel.name);
    Json values = Json::object();
    for (const MapEntry& e : point.entries())
      values[e.name] = config::parameter_value(e.value, *kernel.parameter(e.name));
    for (const auto& param : kernel.parameters) require_parameter(entry, param, values, block);
    block.include.push_back(std::move(values));
  }
}

// One value an exclude rule matches: an implementation or mode of this block, or a parameter value.
Json exclude_value(const Field& field, const std::string& key, const KernelSpec& kernel, const KernelBlock& block) {
  if (key == "implementation" || key == "mode") {
    const std::vector<std::string>& listed = key == "implementation" ? block.implementations : block.modes;
    const std::string name = field.string();
    if (!contains(listed, name)) {
      const bool elsewhere = key == "implementation" ? kernel.implementation(name) != nullptr : kernel.has_mode(name);
      if (elsewhere) field.fail(fmt::format("{} '{}' is not among this block's {}s", key, name, key));
      field.fail(config::unknown_name(key, name, listed, kernel.name));
    }
    return name;
  }
  return config::parameter_value(field, *kernel.parameter(key));
}

void read_exclude(const Field& field, const KernelSpec& kernel, KernelBlock& block) {
  std::vector<std::string> keys = names_of(kernel.parameters);
  keys.insert(keys.end(), {"implementation", "mode"});
  for (const Field& rule_field : field.elements()) {
    const MapFields rule(rule_field, keys, "exclude key", kernel.name);
    if (rule.empty()) rule_field.fail("an empty rule would exclude every point");
    Json values = Json::object();
    for (const MapEntry& e : rule.entries()) {
      if (!e.value.is_list()) {
        values[e.name] = exclude_value(e.value, e.name, kernel, block);
        continue;
      }
      Json alternatives = Json::array();
      for (const Field& element : e.value.elements())
        alternatives.push_back(exclude_value(element, e.name, kernel, block));
      values[e.name] = std::move(alternatives);
    }
    block.exclude.push_back(std::move(values));
  }
}

KernelBlock read_kernel_block(const Field& field, const Registry& registry) {
  const MapFields map(field, kKernelKeys);
  const KernelSpec& kernel = find_kernel(map.require("kernel").value, registry);
  KernelBlock block;
  block.kernel = kernel.name;
  block.where = field.where();
  const MapEntry* e = map.find("implementations");
  block.implementations = e ? chosen_names(e->value, names_of(kernel.implementations), "implementation", kernel.name)
                            : names_of(kernel.implementations);
  e = map.find("modes");
  block.modes = e ? chosen_names(e->value, kernel.modes, "mode", kernel.name) : kernel.modes;
  if ((e = map.find("timeout_s"))) block.timeout_s = positive_number(e->value, kMaxTimeoutS);
  if ((e = map.find("grid"))) read_grid(e->value, kernel, block);
  if ((e = map.find("fixed"))) read_fixed(e->value, kernel, block);
  if (!block.grid.empty())
    for (const auto& param : kernel.parameters)
      if (!find_axis(block, param.name)) require_parameter(map.find("grid")->value, param, Json::object(), block);
  if ((e = map.find("zip"))) read_zip(e->value, block);
  if ((e = map.find("include"))) read_include(e->value, kernel, block);
  if ((e = map.find("exclude"))) read_exclude(e->value, kernel, block);
  if (block.grid.empty() && block.include.empty())
    field.fail("no points: give grid axes or include entries (fixed alone makes no point)");
  return block;
}

// --- the document ---------------------------------------------------------------------------------

// Where each document of a YAML text starts, the text's events otherwise ignored.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// The one document of a sweep file. The documents are counted up to two with yaml-cpp's event
// parser rather than loaded with YAML::LoadAll: on some malformed texts (found by fuzzing: a line
// that starts with a comma after a block key) yaml-cpp's parser reports an empty document again
// and again without reading further, and LoadAll collects them until memory runs out.
YAML::Node load_document(const std::string& text, const std::string& path) {
  const auto error_at = [&](const YAML::Mark& mark, const std::string& key, const std::string& what) {
    return SweepFileError({path, mark.is_null() ? 1 : mark.line + 1, mark.is_null() ? 1 : mark.column + 1}, key, what);
  };
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStarts documents;
    while (documents.starts.size() < 2 && parser.HandleNextDocument(documents)) {}
    if (documents.starts.empty())
      throw error_at(YAML::Mark(), "(document)", "empty file: expected a map with name and kernels");
    if (documents.starts.size() > 1)
      throw error_at(documents.starts[1], "(document)", "a sweep file holds one YAML document, this one holds more");
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) { throw error_at(e.mark, "(yaml)", e.msg); }
}

// A list of non-empty strings, each with where it is written.
std::vector<PluginReference> string_list(const Field& list) {
  std::vector<PluginReference> out;
  for (const Field& element : list.elements())
    out.push_back({non_empty_string(element), element.where(), element.key()});
  return out;
}

PythonReferences read_python(const MapFields& top) {
  PythonReferences python;
  const MapEntry* section = top.find("python");
  if (!section) return python;
  python.where = section->value.where();
  const MapFields fields(section->value, kPythonKeys);
  if (const MapEntry* e = fields.find("modules")) python.modules = string_list(e->value);
  if (const MapEntry* e = fields.find("path")) python.path = string_list(e->value);
  if (const MapEntry* e = fields.find("interpreter")) python.interpreter = non_empty_string(e->value);
  for (const PluginReference& module : python.modules)
    if (!std::ranges::all_of(module.name, [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '.'; }))
      throw SweepFileError(
          module.where, module.key,
          fmt::format("'{}' is not a Python module name (dotted names of letters, digits and _)", module.name));
  return python;
}

// The document's top-level map.
MapFields top_level(const std::string& text, const std::string& path) {
  const YAML::Node root = load_document(text, path);
  return MapFields(Field(path, root, "", root.Mark()), kTopKeys);
}

std::vector<PluginReference> read_plugins(const MapFields& top) {
  const MapEntry* plugins = top.find("plugins");
  return plugins ? string_list(plugins->value) : std::vector<PluginReference>();
}

}  // namespace

PythonReferences python_references(const std::string& text, const std::string& path) {
  return read_python(top_level(text, path));
}

std::vector<PluginReference> plugin_references(const std::string& text, const std::string& path) {
  return read_plugins(top_level(text, path));
}

SweepSpec parse_sweep_text(const std::string& text, const std::string& path, const Registry& registry) {
  const MapFields top = top_level(text, path);
  SweepSpec spec;
  spec.source_path = path;
  spec.source_text = text;
  spec.name = sweep_name(top.require("name").value);
  spec.plugins = read_plugins(top);
  spec.python = read_python(top);
  if (const MapEntry* e = top.find("protocol")) spec.protocol = read_protocol(e->value);
  for (const Field& block : top.require("kernels").value.elements())
    spec.kernels.push_back(read_kernel_block(block, registry));
  if (const MapEntry* e = top.find("output")) spec.output = read_output(e->value);
  if (spec.output.results_file.empty()) spec.output.results_file = spec.name + ".h5";
  return spec;
}

std::string read_sweep_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw SweepFileError({path, 1, 1}, "(file)", fmt::format("cannot open: {}", std::strerror(errno)));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw SweepFileError({path, 1, 1}, "(file)", fmt::format("cannot read: {}", std::strerror(errno)));
  return text.str();
}

SweepSpec load_sweep_file(const std::string& path, const Registry& registry) {
  return parse_sweep_text(read_sweep_file(path), path, registry);
}

}  // namespace ks
