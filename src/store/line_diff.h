#pragma once
// The first line in which two texts differ, as a refusal names it: --resume's when the sweep file
// changed, merge's when two files were made from other sweeps.
#include <string>
#include <string_view>

namespace ks {

// Empty when the texts are equal; otherwise what changed, for --resume's refusal, such as
// "line 7: the results file's sweep has `  n: [1, 2]`, the sweep file has `  n: [1, 2, 4]` (12 lines
// stored, 12 given)".
std::string describe_sweep_text_change(std::string_view stored, std::string_view given);
// Empty when the texts are equal; otherwise their first differing line, each text named by its
// label, such as "line 7: a.h5 has `  n: [1, 2]`, b.h5 has `  n: [1, 2, 4]`" (merge's refusal).
std::string describe_first_differing_line(std::string_view first, std::string_view second, std::string_view first_label,
                                          std::string_view second_label);

}  // namespace ks
