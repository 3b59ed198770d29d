#pragma once
// The checksum of a row's strings, which the writer sets and the damage check compares.
//
// HDF5 keeps variable-length strings in heaps that no checksum covers (the chunks' Fletcher-32 covers
// only the references to them), so a flipped byte there would read as another string. Each row, and
// the root attributes, therefore carry strings_check: the SHA-256 of their strings, each preceded by
// its length, cut to its first 64 bits.
// Pieces are digested as they come (a file's check reads a million rows: no string is built).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/digest.h"
#include "common/fields.h"
#include "store/h5_table.h"

namespace ks {

class StringsCheck {
 public:
  void add(std::string_view text);
  // The strings among the `fields` of `record`, in their order.
  template <class Record> void add_strings(const Record& record, const std::vector<Field<Record>>& fields) {
    for_each_field(record, fields, [&](const Field<Record>&, const auto& value) {
      if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) add(value);
    });
  }
  std::uint64_t finish();

 private:
  Sha256 hash_;
};

template <class Record> std::uint64_t strings_check(const Record& record, const h5::CompoundLayout<Record>& layout) {
  thread_local StringsCheck check;
  check.add_strings(record, layout.columns());
  return check.finish();
}

// Sets each row's strings_check before it is stored (layout 2 on).
template <class Record>
void put_checks(std::span<Record> rows, const h5::CompoundLayout<Record>& layout, std::int64_t layout_version) {
  if (layout_version < 2) return;
  for (Record& row : rows) row.strings_check = strings_check(row, layout);
}

// Whether a row's strings match their check (files of layout 1 have none).
template <class Record>
bool strings_checked(const Record& record, const h5::CompoundLayout<Record>& layout, std::int64_t layout_version) {
  return layout_version < 2 || record.strings_check == strings_check(record, layout);
}

std::string unchecked_row_message(std::uint64_t row, std::string_view table);

// The first row of `table` (read whole) whose strings do not match their check, as a message; empty
// when none.
template <class Record> std::string first_unchecked_row(const h5::Table<Record>& table,
                                                        const h5::CompoundLayout<Record>& layout,
                                                        std::int64_t layout_version, std::string_view name) {
  const std::vector<Record> rows = table.read_all(layout);
  for (std::size_t row = 0; row < rows.size(); ++row)
    if (!strings_checked(rows[row], layout, layout_version)) return unchecked_row_message(row, name);
  return "";
}

}  // namespace ks
