#pragma once
// Thin helpers over the HDF5 1.10 C API for the store: owning handles, error checks that turn the
// HDF5 error stack into an exception, and scalar string/number attributes. Nothing here knows the
// results layout; results_layout.h does.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <hdf5.h>

namespace ks {

// Every failure of the results file: the message names the file, the object and what went wrong.
struct ResultsFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace h5 {

// Owns one HDF5 identifier and closes it with the matching H5?close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      closer_ = other.closer_;
    }
    return *this;
  }
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now; returns false when HDF5 reports a failure (used where the close is the commit).
  bool reset() {
    if (id_ < 0) return true;
    const herr_t status = closer_(std::exchange(id_, H5I_INVALID_HID));
    return status >= 0;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// While alive, HDF5 does not print its error stack to stderr: failures become exceptions instead,
// carrying the innermost HDF5 message. Restores the previous printing on destruction.
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t previous_function_ = nullptr;
  void* previous_data_ = nullptr;
};

// Throws ResultsFileError("WHAT: <innermost HDF5 message>") and clears the HDF5 error stack.
[[noreturn]] void fail(std::string_view what);

// Fails with `what` when `status` (an herr_t, htri_t or hid_t) is negative.
void check_status(std::int64_t status, std::string_view what);

// `id` owned, closed with Close: the H5?close function that matches how it was made (H5Fclose for a
// file from H5Fopen, H5Dclose for a dataset...). Fails with `what` when `id` is not valid.
template <Handle::Closer Close> Handle own(hid_t id, std::string_view what) {
  check_status(id, what);
  return Handle(id, Close);
}

// A variable-length, UTF-8, NUL-terminated string type: what h5py and h5dump show as a plain string.
Handle string_type();

// Scalar attributes on an object (the root group "/" for the run's facts).
void write_string_attribute(hid_t object, const char* name, const std::string& value);
void write_int64_attribute(hid_t object, const char* name, std::int64_t value);
std::string read_string_attribute(hid_t object, const char* name);
std::int64_t read_int64_attribute(hid_t object, const char* name);
bool has_attribute(hid_t object, const char* name);

}  // namespace h5
}  // namespace ks
