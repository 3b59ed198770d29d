#pragma once
// The optimal piecewise-constant fit of a series: where its level changes, found exactly.
//
// A segmentation splits the series into runs of consecutive values, each at least `min_length`
// long, and costs the sum, over its segments, of the absolute deviations of the segment's values from
// their median (the L1 fit of a constant level), plus `penalty` for every boundary between two
// segments. The segmentation of least cost is found by dynamic programming over the boundaries, as
// asv's step detection does (Potts model, L1 norm): F(i), the least cost of the first i values, is the
// least F(j) + cost(j, i) + penalty over every j that leaves a segment [j, i) of min_length or more.
// For each end i the segments [j, i) are costed from j = i - 1 down to 0, one value added at a time to
// a running median (two heaps and their sums), so all of them cost O(n² log n) together.
//
// Why L1 and a least length: a single outlying value costs the same whether it sits in a long
// segment or in a segment of two (its deviation from the level it interrupts), so splitting it off
// never pays; a shift that lasts pays for its boundary as soon as the deviations it saves exceed the
// penalty. Ties between segmentations go to the earliest boundary, so the result is deterministic.
#include <cstddef>
#include <span>
#include <vector>

namespace ks::history {

// The first index of every segment, starting with 0; {0} alone when the series is one level (always
// so for fewer than 2 × min_length values). min_length must be 1 or more.
std::vector<std::size_t> optimal_segmentation(std::span<const double> values, double penalty, std::size_t min_length);

// The sum of the absolute deviations of `values` from their median: a segment's cost.
double absolute_deviation_cost(std::span<const double> values);

}  // namespace ks::history
