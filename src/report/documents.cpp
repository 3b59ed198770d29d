// `kernelsweep documents FOLDER`: the kernelindex objects of a documents folder, one compact line each.
#include <iostream>

#include <fmt/format.h>

#include "kernelindex/document_reader.h"
#include "report/commands.h"
#include "run/run.h"

namespace ks {

int print_documents(const DocumentsRequest& request) {
  const DocumentFilter filter{{request.points.begin(), request.points.end()},
                              {request.runs.begin(), request.runs.end()}};
  try {
    const std::size_t printed =
        for_each_document(request.folder, filter, [](std::string_view line) { std::cout << line << '\n'; });
    if (printed == 0 && !filter.everything()) {
      std::cerr << fmt::format("{}: no document of the points or runs asked for\n", request.folder);
      return kExitFailure;
    }
  } catch (const std::runtime_error& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace ks
