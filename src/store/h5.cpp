#include "store/h5.h"

#include <string>

namespace ks::h5 {

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &previous_function_, &previous_data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, previous_function_, previous_data_); }

namespace {

// The walk goes from the API call down to the cause: the last description is the most specific.
herr_t keep_last_description(unsigned, const H5E_error2_t* error, void* data) {
  if (error->desc != nullptr && error->desc[0] != '\0') { *static_cast<std::string*>(data) = error->desc; }
  return 0;
}

std::string innermost_hdf5_message() {
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_last_description, &message);
  H5Eclear2(H5E_DEFAULT);
  return message;
}

// Opens the attribute when present (to overwrite it, as finish() does for ended_at), else creates it.
Handle open_or_create_attribute(hid_t object, const char* name, hid_t file_type) {
  const std::string what = std::string("writing attribute ") + name;
  if (has_attribute(object, name)) return own<H5Aclose>(H5Aopen(object, name, H5P_DEFAULT), what);
  Handle scalar = own<H5Sclose>(H5Screate(H5S_SCALAR), what);
  return own<H5Aclose>(H5Acreate2(object, name, file_type, scalar.get(), H5P_DEFAULT, H5P_DEFAULT), what);
}

Handle open_attribute(hid_t object, const char* name) {
  if (!has_attribute(object, name))
    throw ResultsFileError(std::string("attribute ") + name + " is missing: not a kernelsweep results file?");
  return own<H5Aclose>(H5Aopen(object, name, H5P_DEFAULT), std::string("opening attribute ") + name);
}

}  // namespace

void fail(std::string_view what) {
  const std::string cause = innermost_hdf5_message();
  std::string message(what);
  if (!cause.empty()) message += ": " + cause;
  throw ResultsFileError(message);
}

void check_status(std::int64_t status, std::string_view what) {
  if (status < 0) fail(what);
}

Handle string_type() {
  Handle type = own<H5Tclose>(H5Tcopy(H5T_C_S1), "copying the C string type");
  check_status(H5Tset_size(type.get(), H5T_VARIABLE), "making the string type variable-length");
  check_status(H5Tset_cset(type.get(), H5T_CSET_UTF8), "setting the string type's character set");
  return type;
}

bool has_attribute(hid_t object, const char* name) {
  const htri_t exists = H5Aexists(object, name);
  if (exists < 0) fail(std::string("looking for attribute ") + name);
  return exists > 0;
}

void write_string_attribute(hid_t object, const char* name, const std::string& value) {
  Handle type = string_type();
  Handle attribute = open_or_create_attribute(object, name, type.get());
  const char* text = value.c_str();
  check_status(H5Awrite(attribute.get(), type.get(), &text), std::string("writing attribute ") + name);
}

void write_int64_attribute(hid_t object, const char* name, std::int64_t value) {
  Handle attribute = open_or_create_attribute(object, name, H5T_STD_I64LE);
  check_status(H5Awrite(attribute.get(), H5T_NATIVE_INT64, &value), std::string("writing attribute ") + name);
}

std::string read_string_attribute(hid_t object, const char* name) {
  Handle attribute = open_attribute(object, name);
  Handle stored_type = own<H5Tclose>(H5Aget_type(attribute.get()), std::string("reading the type of ") + name);
  if (H5Tget_class(stored_type.get()) != H5T_STRING || H5Tis_variable_str(stored_type.get()) <= 0)
    throw ResultsFileError(std::string("attribute ") + name + " is not a variable-length string");
  Handle type = string_type();
  char* text = nullptr;
  check_status(H5Aread(attribute.get(), type.get(), &text), std::string("reading attribute ") + name);
  std::string value = text != nullptr ? text : "";
  H5free_memory(text);
  return value;
}

std::int64_t read_int64_attribute(hid_t object, const char* name) {
  Handle attribute = open_attribute(object, name);
  std::int64_t value = 0;
  check_status(H5Aread(attribute.get(), H5T_NATIVE_INT64, &value), std::string("reading attribute ") + name);
  return value;
}

}  // namespace ks::h5
