#pragma once
// Fleet health: the ranks of a run held against each other. Ranks whose devices have the same name
// should measure alike; one whose memory bandwidth or arithmetic rate is further below the median of
// its kind than that figure's tolerance (slow_fraction: a GPU stuck at a lower power cap or clock, a
// CPU core shared with another job) would make its points look slow, and is named before they mislead
// anyone.
#include <map>
#include <string>
#include <vector>

#include "calibration/calibration.h"

namespace ks {

// How far below its reference (the median of its kind, or its own calibration) a figure may read
// before it counts as slow or drifting. kSlowFraction for the figures that repeat to within 1% on a
// sound device: memory bandwidth, a GPU's fp32 product (its CUDA cores stay under the power limit), a
// CPU's rates. kPowerBoundSlowFraction for a GPU's tensor-core products (fp64, tf32, bf16, fp16, fp8),
// which run it at its power limit: there its clock, and their rate with it, moves by up to 12%
// between two calibrations of a sound H100 and by 19% between two points
// (bench/results/speed-of-light-h100.md), while a GPU held at half its power still reads far below.
inline constexpr double kSlowFraction = 0.05;
inline constexpr double kPowerBoundSlowFraction = 0.20;
double slow_fraction(const std::string& backend, const std::string& figure);

// The rule in words, for the messages that name slow ranks and drift: "more than 5% below (20% for a
// GPU's tensor-core products)".
std::string slow_rule();

// One figure of a rank below its kind's median.
struct SlowFigure {
  std::string figure;      // "memory_gbps", or "tflops.<dtype>"
  double value = 0;        // the rank's
  double median = 0;       // of the ranks with the same device
  double below_pct = 0;    // how far below the median, in percent (positive)
  double allowed_pct = 0;  // how far below it may read: its tolerance, in percent (slow_fraction)
};

struct SlowRank {
  int rank = 0;
  std::string host;
  std::string device;
  int peers = 0;                    // ranks with the same device, itself included
  std::vector<SlowFigure> figures;  // the figures below the median by more than their tolerance

  // "rank 3 on node7 (NVIDIA H100 80GB HBM3): memory_gbps 2610 is 12.4% below the median of 4 (2980)"
  std::string describe() const;
};

// The ranks further below the median of the ranks that share their primary device's
// name (and backend) than a figure's tolerance, in rank order. Only kinds of two or more ranks are compared, and a
// figure only among the ranks that measured it.
std::vector<SlowRank> slow_ranks(const std::vector<RankCalibration>& ranks);

// A device's figures by name: memory_gbps and tflops.<dtype>, those measured.
std::map<std::string, double> figures_of(const DeviceCalibration& device);

// The figures of `values` further below the same figure of `reference` than their tolerance on
// `backend` (figures missing from either are not compared).
std::vector<SlowFigure> figures_below(const std::string& backend, const std::map<std::string, double>& reference,
                                      const std::map<std::string, double>& values);

// The slow ranks to set aside (not to measure, not to keep the figures of): all of `slow`, except
// where every rank of a device is slow in some figure (each below the others in a different one, as
// two ranks may be): the one whose worst figure is least below its median stays, so that each
// device keeps a rank. In rank order.
std::vector<int> ranks_to_set_aside(const std::vector<SlowRank>& slow);

nlohmann::json to_json(const SlowRank& slow);

}  // namespace ks
