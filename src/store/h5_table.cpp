#include "store/h5_table.h"

#include <array>

namespace ks::h5 {

namespace {

Handle access_properties(std::size_t chunk_cache_bytes, const std::string& name) {
  Handle dapl = own<H5Pclose>(H5Pcreate(H5P_DATASET_ACCESS), "making access properties for " + name);
  // A cache that holds the chunk being filled means a flush writes it once instead of evicting it
  // to disk part-filled between appends.
  check_status(
      H5Pset_chunk_cache(dapl.get(), H5D_CHUNK_CACHE_NSLOTS_DEFAULT, chunk_cache_bytes, H5D_CHUNK_CACHE_W0_DEFAULT),
      "setting the chunk cache of " + name);
  return dapl;
}

std::uint64_t current_size(hid_t dataset, const std::string& name) {
  Handle space = own<H5Sclose>(H5Dget_space(dataset), "reading the size of " + name);
  if (H5Sget_simple_extent_ndims(space.get()) != 1) throw ResultsFileError(name + " is not one-dimensional");
  hsize_t size = 0;
  check_status(H5Sget_simple_extent_dims(space.get(), &size, nullptr), "reading the size of " + name);
  return size;
}

// The file-side selection [first, first + count) of the dataset.
Handle selection(hid_t dataset, std::uint64_t first, std::uint64_t count, const std::string& what) {
  Handle space = own<H5Sclose>(H5Dget_space(dataset), what);
  const hsize_t start = first, n = count;
  check_status(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &start, nullptr, &n, nullptr), what);
  return space;
}

}  // namespace

Extendable1D::Extendable1D(Handle dataset, std::string name, std::uint64_t size, std::size_t conversion_buffer_bytes)
    : dataset_(std::move(dataset)), name_(std::move(name)), size_(size) {
  if (conversion_buffer_bytes == 0) return;
  conversion_buffer_.resize(conversion_buffer_bytes);
  background_buffer_.resize(conversion_buffer_bytes);
  transfer_ = own<H5Pclose>(H5Pcreate(H5P_DATASET_XFER), "making transfer properties for " + name_);
  check_status(
      H5Pset_buffer(transfer_.get(), conversion_buffer_bytes, conversion_buffer_.data(), background_buffer_.data()),
      "setting the conversion buffers of " + name_);
}

Extendable1D Extendable1D::create(hid_t file, const std::string& name, hid_t file_type, hsize_t chunk_elements,
                                  const Options& options) {
  const std::string what = "creating dataset " + name;
  const hsize_t initial = 0, unlimited = H5S_UNLIMITED;
  Handle space = own<H5Sclose>(H5Screate_simple(1, &initial, &unlimited), what);
  Handle dcpl = own<H5Pclose>(H5Pcreate(H5P_DATASET_CREATE), what);
  // Uncompressed chunks: appends stay cheap, and float64 timings barely compress anyway. Each chunk
  // carries a Fletcher-32 checksum (4 bytes; a built-in filter every HDF5 reader applies), so a
  // damaged chunk fails to read rather than reading as wrong values.
  check_status(H5Pset_chunk(dcpl.get(), 1, &chunk_elements), what);
  check_status(H5Pset_fletcher32(dcpl.get()), what);
  Handle dapl = access_properties(options.chunk_cache_bytes, name);
  Handle dataset =
      own<H5Dclose>(H5Dcreate2(file, name.c_str(), file_type, space.get(), H5P_DEFAULT, dcpl.get(), dapl.get()), what);
  return Extendable1D(std::move(dataset), name, 0, options.conversion_buffer_bytes);
}

Extendable1D Extendable1D::open(hid_t file, const std::string& name, const Options& options) {
  Handle dapl = access_properties(options.chunk_cache_bytes, name);
  Handle dataset = own<H5Dclose>(H5Dopen2(file, name.c_str(), dapl.get()), "opening dataset " + name);
  const std::uint64_t size = current_size(dataset.get(), name);
  return Extendable1D(std::move(dataset), name, size, options.conversion_buffer_bytes);
}

bool Extendable1D::stored_as(hid_t file_type) const {
  Handle stored = own<H5Tclose>(H5Dget_type(dataset_.get()), "reading the type of " + name_);
  const htri_t equal = H5Tequal(stored.get(), file_type);
  check_status(equal, "comparing the type of " + name_);
  return equal > 0;
}

void Extendable1D::append(hid_t memory_type, std::uint64_t count, const void* buffer) {
  if (count == 0) return;
  const std::string what = "appending " + std::to_string(count) + " elements to " + name_;
  const hsize_t new_size = size_ + count, n = count;
  check_status(H5Dset_extent(dataset_.get(), &new_size), what);
  Handle file_space = selection(dataset_.get(), size_, count, what);
  Handle memory_space = own<H5Sclose>(H5Screate_simple(1, &n, nullptr), what);
  check_status(
      H5Dwrite(dataset_.get(), memory_type, memory_space.get(), file_space.get(), transfer_properties(), buffer), what);
  size_ = new_size;
}

void Extendable1D::shrink_to(std::uint64_t size) {
  if (size >= size_) return;
  const hsize_t new_size = size;
  check_status(H5Dset_extent(dataset_.get(), &new_size),
               "shrinking " + name_ + " to " + std::to_string(size) + " elements");
  size_ = size;
}

void Extendable1D::read(hid_t memory_type, std::uint64_t first, std::uint64_t count, void* buffer,
                        StringArena* arena) const {
  const std::string what = "reading elements [" + std::to_string(first) + ", " + std::to_string(first + count) +
                           ") of " + name_ + " (size " + std::to_string(size_) + ")";
  if (first + count > size_) throw ResultsFileError(what + ": out of range");
  if (count == 0) return;
  Handle strings_from_arena;
  if (arena) {
    strings_from_arena = own<H5Pclose>(H5Pcopy(transfer_.valid() ? transfer_.get() : H5P_DATASET_XFER_DEFAULT),
                                       "making transfer properties for " + name_);
    const auto allocate = [](std::size_t bytes, void* info) {
      return static_cast<StringArena*>(info)->allocate(bytes);
    };
    const auto release = [](void*, void*) {};  // the arena takes everything back at once
    check_status(H5Pset_vlen_mem_manager(strings_from_arena.get(), allocate, arena, release, nullptr),
                 "setting the string memory of reads of " + name_);
  }
  const hsize_t n = count;
  Handle file_space = selection(dataset_.get(), first, count, what);
  Handle memory_space = own<H5Sclose>(H5Screate_simple(1, &n, nullptr), what);
  const hid_t transfer = arena ? strings_from_arena.get() : transfer_properties();
  check_status(H5Dread(dataset_.get(), memory_type, memory_space.get(), file_space.get(), transfer, buffer), what);
}

void* StringArena::allocate(std::size_t bytes) {
  bytes = (bytes + 7) / 8 * 8;  // keeps every piece 8-byte aligned
  if (bytes > kBlockBytes) {
    // A string larger than a block gets a block of its own, placed before the one being handed out.
    blocks_.insert(blocks_.begin() + static_cast<std::ptrdiff_t>(block_), std::vector<std::byte>(bytes));
    return blocks_[block_++].data();
  }
  if (block_ < blocks_.size() && used_ + bytes > blocks_[block_].size()) {
    ++block_;
    used_ = 0;
  }
  while (block_ < blocks_.size() && blocks_[block_].size() < bytes) ++block_;
  if (block_ == blocks_.size()) blocks_.emplace_back(kBlockBytes);
  void* piece = blocks_[block_].data() + used_;
  used_ += bytes;
  return piece;
}

void StringArena::reset() {
  // Blocks of one large string go; the ordinary blocks stay for the next read.
  std::erase_if(blocks_, [](const std::vector<std::byte>& block) { return block.size() != kBlockBytes; });
  block_ = 0;
  used_ = 0;
}

void Extendable1D::clear_past_end(std::uint64_t margin_chunks) {
  const std::string what = "clearing what lies past the end of " + name_;
  Handle dcpl = own<H5Pclose>(H5Dget_create_plist(dataset_.get()), what);
  hsize_t chunk = 0;
  if (H5Pget_chunk(dcpl.get(), 1, &chunk) != 1 || chunk == 0) throw ResultsFileError(what + ": not chunked");
  // Growing over the region and shrinking back makes HDF5 prune it: chunks wholly outside the new
  // size are removed, and the outside part of the last chunk is overwritten with the fill value.
  const hsize_t size = size_;
  const hsize_t beyond = (size + chunk - 1) / chunk * chunk + margin_chunks * chunk;
  check_status(H5Dset_extent(dataset_.get(), &beyond), what);
  check_status(H5Dset_extent(dataset_.get(), &size), what);
}

// Field::Accessor's alternatives in order, a string then the numbers; in the file explicit little-endian
// types, so the file reads the same on any machine.
hid_t member_type(std::size_t variant_index, hid_t string_type, bool in_file) {
  if (variant_index == 0) return string_type;
  if (in_file) return std::array{H5T_STD_I32LE, H5T_STD_I64LE, H5T_STD_U64LE, H5T_IEEE_F64LE}[variant_index - 1];
  return std::array{H5T_NATIVE_INT32, H5T_NATIVE_INT64, H5T_NATIVE_UINT64, H5T_NATIVE_DOUBLE}[variant_index - 1];
}

Handle compound_type(const std::vector<std::string>& names, const std::vector<hid_t>& member_types,
                     const std::vector<std::size_t>& offsets, std::size_t total_size) {
  Handle type = own<H5Tclose>(H5Tcreate(H5T_COMPOUND, total_size), "creating a compound type");
  for (std::size_t i = 0; i < names.size(); ++i) {
    check_status(H5Tinsert(type.get(), names[i].c_str(), offsets[i], member_types[i]),
                 "adding column " + names[i] + " to a compound type");
  }
  return type;
}

}  // namespace ks::h5
