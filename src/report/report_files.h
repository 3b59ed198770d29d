#pragma once
// What the report says of its files and of the documents their points cite: each file's points,
// statuses and hardware, one sentence on where the files were measured, and the environment and
// protocol documents cited, with the fields of each.
#include <map>
#include <string>
#include <vector>

#include "report/report_model.h"

namespace ks::report_page {

// The hardware each file's lines are named with, by file: empty when every file ran on the same.
using LegendHardware = std::map<std::string, std::string>;

std::vector<FileSummary> file_summaries(const std::vector<LoadedFile>& files, const std::vector<ViewRow>& view);

// "Measured on NVIDIA H200 (sm_90, SXM5-141GB)." or, where the files differ, each file's hardware.
std::string hardware_statement(const std::vector<FileSummary>& files);

// Where the files ran on different hardware, each file's product ("NVIDIA H200"), for the legends:
// a line of an A100 beside one of an H200 says so where it is read.
LegendHardware legend_hardware_of(const std::vector<FileSummary>& files);

// The environment (`environments`) or protocol documents the points of `view` cite, in file order,
// each with the files that hold it and how many points cite it; a digest no file holds is named too.
std::vector<CitedDocument> cited_documents(const std::vector<LoadedFile>& files, const std::vector<ViewRow>& view,
                                           bool environments);

}  // namespace ks::report_page
