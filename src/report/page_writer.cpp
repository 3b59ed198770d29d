#include "report/page_writer.h"

#include <fstream>
#include <stdexcept>
#include <system_error>

namespace ks::report_page {

std::string make_output_folder(const std::filesystem::path& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (!error && std::filesystem::is_directory(directory)) return "";
  return fmt::format("{}: cannot make the output folder ({})", directory.string(),
                     error ? error.message() : "a file is in the way");
}

void write_page(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace ks::report_page
