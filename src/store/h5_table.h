#pragma once
// Extendable, chunked 1-D datasets, and compound tables whose rows map to a C++ record.
//
// A table is described once, as a list of columns (the record's fields: name + accessor); from that list
// come the in-memory compound type (one 8-byte slot per column), the packed little-endian file type,
// and the copying of records into and out of row buffers. Reading with a subset of the columns
// (partial compound I/O) reads only those fields from the file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/fields.h"
#include "store/h5.h"

namespace ks::h5 {

// Memory for the variable-length strings that reads of a table allocate: HDF5 would malloc each
// string and the reader free it again, which for a million rows of a dozen strings costs more than
// the reading. The arena hands out pieces of a few large blocks instead, and takes them all back at
// once when the strings have been copied out; the blocks are kept for the next read.
class StringArena {
 public:
  void* allocate(std::size_t bytes);
  void reset();

 private:
  static constexpr std::size_t kBlockBytes = 1u << 20;
  std::vector<std::vector<std::byte>> blocks_;
  std::size_t block_ = 0;  // the block being handed out
  std::size_t used_ = 0;   // bytes of it handed out
};

// A 1-D dataset with an unlimited maximum size, grown by appending at its end.
class Extendable1D {
 public:
  // Datasets whose elements need a type conversion (compounds with strings) get conversion buffers
  // of `conversion_buffer_bytes`, allocated once: left to HDF5, every read and write would calloc
  // fresh ones (1 MiB each by default), and that page-faulting memset dominated small appends.
  struct Options {
    std::size_t chunk_cache_bytes = 1u << 20;
    std::size_t conversion_buffer_bytes = 0;  // 0: HDF5's default (allocated per call)
  };

  static Extendable1D create(hid_t file, const std::string& name, hid_t file_type, hsize_t chunk_elements,
                             const Options& options);
  static Extendable1D open(hid_t file, const std::string& name, const Options& options);

  std::uint64_t size() const { return size_; }
  // Whether the file describes the elements' type as `file_type` (H5Tequal).
  bool stored_as(hid_t file_type) const;
  hid_t id() const { return dataset_.get(); }

  // Writes `count` elements of `memory_type` from `buffer` after the current end.
  void append(hid_t memory_type, std::uint64_t count, const void* buffer);
  // Reads elements [first, first + count) into `buffer` as `memory_type`. A type with variable-length
  // strings needs `arena`: they are allocated from it, and live until it is reset.
  void read(hid_t memory_type, std::uint64_t first, std::uint64_t count, void* buffer,
            StringArena* arena = nullptr) const;

  // Resets whatever lies past the end in the file to the fill value (and drops whole chunks there).
  // A writer killed after its last flush may have left chunk data past the end that the file's
  // metadata does not count yet; writing variable-length strings over such data makes HDF5 free
  // the heap objects it appears to reference, which crashes or corrupts live rows. Reopening for
  // append calls this first. `margin_chunks`: how many chunks past the end the killed writer may
  // have touched.
  void clear_past_end(std::uint64_t margin_chunks);
  // Drops the elements from `size` on (a no-op when the dataset holds no more).
  void shrink_to(std::uint64_t size);

 private:
  Extendable1D(Handle dataset, std::string name, std::uint64_t size, std::size_t conversion_buffer_bytes);
  hid_t transfer_properties() const { return transfer_.valid() ? transfer_.get() : H5P_DEFAULT; }

  Handle dataset_;
  std::string name_;
  std::uint64_t size_ = 0;
  // The buffers live on the heap, so moving the object keeps the pointers in transfer_ valid.
  std::vector<std::byte> conversion_buffer_, background_buffer_;
  Handle transfer_;
};

// A column: a field of the record (common/fields.h), stored under its name.
template <class Record> using Column = Field<Record>;

// Every column occupies an 8-byte slot in memory: a char* for strings, the number otherwise.
inline constexpr std::size_t kSlotBytes = 8;

// The non-template half of CompoundLayout: HDF5 types of the columns, in memory or in the file.
hid_t member_type(std::size_t variant_index, hid_t string_type, bool in_file);
Handle compound_type(const std::vector<std::string>& names, const std::vector<hid_t>& member_types,
                     const std::vector<std::size_t>& offsets, std::size_t total_size);

template <class Record> class CompoundLayout {
 public:
  explicit CompoundLayout(std::vector<Column<Record>> columns) : columns_(std::move(columns)) { build_types(); }

  // The same record, restricted to `names` (in that order): reads then touch only those fields.
  CompoundLayout subset(const std::vector<std::string_view>& names) const {
    std::vector<Column<Record>> chosen;
    for (std::string_view name : names) {
      const auto column = std::find_if(columns_.begin(), columns_.end(), [&](const auto& c) { return c.name == name; });
      if (column == columns_.end()) throw ResultsFileError("no column named " + std::string(name));
      chosen.push_back(*column);
    }
    return CompoundLayout(std::move(chosen));
  }

  std::size_t row_bytes() const { return columns_.size() * kSlotBytes; }
  hid_t memory_type() const { return memory_type_.get(); }
  hid_t file_type() const { return file_type_.get(); }
  const std::vector<Column<Record>>& columns() const { return columns_; }

  // Copies the record into its row slots. String slots point into `record`, which must outlive the write.
  void pack(Record& record, std::byte* row) const {
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      std::byte* slot = row + i * kSlotBytes;
      std::visit([&](auto access) { store_slot(access(record), slot); }, columns_[i].access);
    }
  }

  // Copies the row slots read from the file into the record's fields of this layout.
  void unpack(const std::byte* row, Record& record) const {
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      const std::byte* slot = row + i * kSlotBytes;
      std::visit([&](auto access) { load_slot(slot, access(record)); }, columns_[i].access);
    }
  }

 private:
  static void store_slot(const std::string& value, std::byte* slot) {
    const char* text = value.c_str();
    std::memcpy(slot, &text, sizeof text);
  }
  template <class Number> static void store_slot(const Number& value, std::byte* slot) {
    std::memcpy(slot, &value, sizeof value);
  }
  static void load_slot(const std::byte* slot, std::string& value) {
    const char* text = nullptr;
    std::memcpy(&text, slot, sizeof text);
    value = text != nullptr ? text : "";
  }
  template <class Number> static void load_slot(const std::byte* slot, Number& value) {
    std::memcpy(&value, slot, sizeof value);
  }

  void build_types() {
    string_type_ = string_type();
    std::vector<std::string> names;
    std::vector<hid_t> native, file;
    std::vector<std::size_t> memory_offsets, file_offsets;
    std::size_t file_size = 0;
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      const std::size_t kind = columns_[i].access.index();
      names.push_back(columns_[i].name);
      native.push_back(member_type(kind, string_type_.get(), false));
      file.push_back(member_type(kind, string_type_.get(), true));
      memory_offsets.push_back(i * kSlotBytes);
      file_offsets.push_back(file_size);
      file_size += H5Tget_size(file.back());
    }
    memory_type_ = compound_type(names, native, memory_offsets, row_bytes());
    file_type_ = compound_type(names, file, file_offsets, file_size);
  }

  std::vector<Column<Record>> columns_;
  Handle string_type_, memory_type_, file_type_;
};

// A compound dataset of Records that grows at its end: `rows` made with a layout's file_type().
template <class Record> class Table {
 public:
  explicit Table(Extendable1D rows) : rows_(std::move(rows)) {}

  std::uint64_t size() const { return rows_.size(); }
  void clear_past_end(std::uint64_t margin_chunks) { rows_.clear_past_end(margin_chunks); }
  bool stored_as(hid_t file_type) const { return rows_.stored_as(file_type); }

  void append(std::span<Record> records, const CompoundLayout<Record>& layout) {
    std::vector<std::byte> buffer(records.size() * layout.row_bytes());
    for (std::size_t i = 0; i < records.size(); ++i) layout.pack(records[i], buffer.data() + i * layout.row_bytes());
    rows_.append(layout.memory_type(), records.size(), buffer.data());
  }

  // Rows [first, first + count) with the fields of `layout` filled (the others keep their defaults).
  std::vector<Record> read(const CompoundLayout<Record>& layout, std::uint64_t first, std::uint64_t count) const {
    std::vector<Record> records(count);
    for (std::uint64_t done = 0; done < count; done += kReadBlockRows) {
      const std::uint64_t block = std::min<std::uint64_t>(kReadBlockRows, count - done);
      read_block(layout, first + done, std::span<Record>(records.data() + done, block));
    }
    return records;
  }
  std::vector<Record> read_all(const CompoundLayout<Record>& layout) const { return read(layout, 0, size()); }

  // Visits rows [first, first + count), visit(row index, record), with the fields of `layout` filled,
  // through one block of records reused from block to block: a scan of a large table allocates no
  // row per row.
  template <class Visit>
  void scan(const CompoundLayout<Record>& layout, std::uint64_t first, std::uint64_t count, Visit&& visit) const {
    const std::uint64_t end = first + count;
    std::vector<Record> block(std::min<std::uint64_t>(kReadBlockRows, count));
    for (std::uint64_t at = first; at < end; at += kReadBlockRows) {
      const std::uint64_t n = std::min<std::uint64_t>(kReadBlockRows, end - at);
      read_block(layout, at, std::span<Record>(block.data(), n));
      for (std::uint64_t i = 0; i < n; ++i) visit(at + i, block[i]);
    }
  }

 private:
  // Bounds the row buffer (and HDF5's string allocations) when reading large tables.
  static constexpr std::uint64_t kReadBlockRows = 4096;

  void read_block(const CompoundLayout<Record>& layout, std::uint64_t first, std::span<Record> out) const {
    read_buffer_.resize(out.size() * layout.row_bytes());
    rows_.read(layout.memory_type(), first, out.size(), read_buffer_.data(), &strings_);
    for (std::size_t i = 0; i < out.size(); ++i) layout.unpack(read_buffer_.data() + i * layout.row_bytes(), out[i]);
    strings_.reset();  // the block's strings are copied out
  }

  Extendable1D rows_;
  // Reused from block to block (reading does not change the table).
  mutable std::vector<std::byte> read_buffer_;
  mutable StringArena strings_;
};

}  // namespace ks::h5
