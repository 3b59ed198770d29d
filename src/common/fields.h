#pragma once
// A record's fields described once, as data: each field's name, where its value lives, and whether
// it is a figure of the measurement. Tables in the results file, JSON messages and documents are all
// made from such a list, so a field added to the list reaches every one of them.
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace ks {

template <class Record> struct Field {
  using Accessor = std::variant<std::string& (*)(Record&), std::int32_t& (*)(Record&), std::int64_t& (*)(Record&),
                                std::uint64_t& (*)(Record&), double& (*)(Record&)>;
  std::string name;
  Accessor access;
  bool metric = false;  // a figure of the measurement, listed among a document's metrics
};

// Field<RECORD>{"name", accessor to RECORD's `member`}; member may be nested (stats.median_ns).
#define KS_FIELD(RECORD, NAME, MEMBER)                                \
  ::ks::Field<RECORD> {                                               \
    NAME, +[](RECORD& r) -> decltype((r.MEMBER)) { return r.MEMBER; } \
  }
// The same for a figure of the measurement.
#define KS_METRIC(RECORD, NAME, MEMBER)                                     \
  ::ks::Field<RECORD> {                                                     \
    NAME, +[](RECORD& r) -> decltype((r.MEMBER)) { return r.MEMBER; }, true \
  }

// Calls visit(name, value) for each field, value as the member's own type.
template <class Record, class Visit>
void for_each_field(const Record& record, const std::vector<Field<Record>>& fields, Visit&& visit) {
  auto& mutable_record = const_cast<Record&>(record);  // the accessors serve reading and writing alike
  for (const auto& field : fields)
    std::visit([&](auto access) { visit(field, std::as_const(access(mutable_record))); }, field.access);
}

// {name: value, ...} of every field; a non-finite number (a figure not measured) as null, JSON having
// no NaN.
template <class Record> nlohmann::json fields_to_json(const Record& record, const std::vector<Field<Record>>& fields) {
  nlohmann::json out = nlohmann::json::object();
  for_each_field(record, fields, [&](const Field<Record>& field, const auto& value) {
    if constexpr (std::is_floating_point_v<std::decay_t<decltype(value)>>) {
      if (!std::isfinite(value)) {
        out[field.name] = nullptr;
        return;
      }
    }
    out[field.name] = value;
  });
  return out;
}

// Sets every field from `json`; throws std::runtime_error naming a field that is missing or of
// another type.
template <class Record>
void fields_from_json(const nlohmann::json& json, Record& record, const std::vector<Field<Record>>& fields) {
  for (const auto& field : fields) {
    const auto found = json.find(field.name);
    if (found == json.end()) throw std::runtime_error("field " + field.name + " is missing");
    std::visit(
        [&](auto access) {
          auto& target = access(record);
          using Value = std::remove_reference_t<decltype(target)>;
          if constexpr (std::is_floating_point_v<Value>) {
            if (found->is_null()) {  // written for a non-finite number
              target = std::numeric_limits<Value>::quiet_NaN();
              return;
            }
          }
          try {
            target = found->template get<Value>();
          } catch (const nlohmann::json::exception&) {
            throw std::runtime_error("field " + field.name + " has the wrong type: " + found->dump());
          }
        },
        field.access);
  }
}

}  // namespace ks
