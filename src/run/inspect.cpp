// validate, plan and kernels: the commands that read a sweep file or the registry and measure nothing.
#include <iostream>
#include <ranges>

#include <fmt/format.h>

#include "common/canonical_json.h"
#include "kernels/kernel.h"
#include "run/run.h"
#include "run/sweep_loading.h"

namespace ks {
namespace {

std::string compact_params(const Json& params) {
  std::string out;
  for (const auto& [name, value] : params.items()) {
    if (!out.empty()) out += ' ';
    out += name + "=" + (value.is_string() ? value.get<std::string>() : canonical_json(value));
  }
  return out;
}

Json point_json(const Point& p) {
  return {{"index", p.index}, {"id", p.id()},      {"kernel", p.kernel}, {"implementation", p.implementation},
          {"mode", p.mode},   {"params", p.params}};
}

std::string value_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string describe_values(const ParamSpec& p) {
  std::string out = fmt::format("{}", fmt::join(p.allowed | std::views::transform(value_text), "|"));
  if (out.empty()) {
    out = to_string(p.type);
    if (p.min) out += fmt::format(" >= {}", *p.min);
    if (p.max) out += fmt::format(" <= {}", *p.max);
  }
  for (const auto& v : p.special) out += fmt::format(" or {}", value_text(v));
  return out;
}

// {"plugin", "version", "library", "sha256"} of a plugin's kernel or implementation, {"python_module", "version",
// "source", "sha256"} of a Python module's; null when built in.
Json origin_json(const Origin& origin) {
  if (origin.plugin.empty()) return nullptr;
  Json out = {{"version", origin.version}, {"sha256", origin.sha256}};
  out[origin.python ? "python_module" : "plugin"] = origin.plugin;
  out[origin.python ? "source" : "library"] = origin.library;
  return out;
}

// " [plugin NAME VERSION]" after what a plugin brought, " [Python module NAME]" after what a Python
// module declared; nothing after what is built in.
std::string origin_note(const Origin& origin) {
  if (origin.plugin.empty()) return "";
  if (origin.python) return fmt::format(" [Python module {}]", origin.plugin);
  return fmt::format(" [plugin {} {}]", origin.plugin, origin.version);
}

// What follows an implementation in the listing: where it came from, and " [Python]" after
// kernelsweep's own Python implementations (a module's are named by origin_note).
std::string implementation_note(const ImplementationSpec& implementation) {
  if (implementation.python_module.empty() || implementation.origin.python) return origin_note(implementation.origin);
  return " [Python]";
}

}  // namespace

int validate_sweep(const PlanRequest& request, Registry& registry) {
  const auto loaded = load_sweep(request, registry);
  const auto count = loaded ? loaded->count() : std::nullopt;
  if (!count) return kExitBadInput;
  std::cout << fmt::format("ok: {} points\n", *count);
  return kExitOk;
}

// The JSON array `plan --json` prints, written a point at a time: the text of Json::dump(2) of the
// whole array, without holding the array.
class JsonArrayPrinter {
 public:
  void add(const Json& element) {
    std::string text = element.dump(2);
    std::string indented;
    indented.reserve(text.size() + 64);
    indented += first_ ? "[\n  " : ",\n  ";
    for (char c : text) {
      indented += c;
      if (c == '\n') indented += "  ";
    }
    std::cout << indented;
    first_ = false;
  }
  void finish() { std::cout << (first_ ? "[]\n" : "\n]\n"); }

 private:
  bool first_ = true;
};

// A row of the plan's table.
constexpr const char* kPlanRow = "{:>6}  {:<12}  {:<20} {:<10} {:<16} {}\n";

int print_plan(const PlanRequest& args, Registry& registry) {
  const auto loaded = load_sweep(args, registry);
  if (!loaded) return kExitBadInput;
  if (args.json) {
    JsonArrayPrinter printer;
    const bool planned = loaded->stream([&](Point& p, std::size_t) {
      printer.add(point_json(p));
      return true;
    });
    if (!planned) return kExitBadInput;
    printer.finish();
    return kExitOk;
  }
  std::cout << fmt::format(kPlanRow, "#", "id", "kernel", "impl", "mode", "parameters");
  std::size_t points = 0, groups = 0;
  const bool planned = loaded->stream([&](Point& p, std::size_t group) {
    std::cout << fmt::format(kPlanRow, p.index, p.id().substr(0, 12), p.kernel, p.implementation, p.mode,
                             compact_params(p.params));
    ++points;
    groups = group + 1;
    return true;
  });
  if (!planned) return kExitBadInput;
  std::cout << fmt::format("{} points in {} groups\n", points, groups);
  return kExitOk;
}

int print_kernels(const PlanRequest& request, Registry& registry) {
  if (!load_command_line_kernels(request, registry)) return kExitBadInput;
  if (request.json) {
    Json out = Json::array();
    for (const KernelSpec& k : registry.all()) {
      Json params = Json::array(), impls = Json::array();
      for (const auto& p : k.parameters)
        params.push_back({{"name", p.name},
                          {"type", to_string(p.type)},
                          {"default", p.default_value},
                          {"allowed", p.allowed},
                          {"special", p.special},
                          {"help", p.help}});
      for (const auto& i : k.implementations)
        impls.push_back({{"name", i.name},
                         {"backend", to_string(i.backend)},
                         {"help", i.help},
                         {"origin", origin_json(i.origin)},
                         {"python_module", i.python_module.empty() ? Json(nullptr) : Json(i.python_module)}});
      out.push_back({{"name", k.name},
                     {"title", k.title},
                     {"description", k.description},
                     {"parameters", params},
                     {"modes", k.modes},
                     {"implementations", impls},
                     {"origin", origin_json(k.origin)}});
    }
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  for (const KernelSpec& k : registry.all()) {
    std::cout << fmt::format("{}: {}{}\n", k.name, k.description, origin_note(k.origin));
    std::cout << fmt::format("  modes: {}\n", fmt::join(k.modes, ", "));
    std::cout << "  implementations:";
    for (const auto& i : k.implementations)
      std::cout << fmt::format(" {} ({}){}", i.name, to_string(i.backend), implementation_note(i));
    std::cout << "\n  parameters:\n";
    for (const auto& p : k.parameters)
      std::cout << fmt::format("    {:<18} {:<28} default {}\n", p.name, describe_values(p),
                               p.default_value.is_null() ? "(required)" : p.default_value.dump());
  }
  return kExitOk;
}

}  // namespace ks
