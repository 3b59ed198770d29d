#pragma once
// Fleet health: the ranks of a run held against each other. Ranks whose devices have the same name
// should measure alike; one whose memory bandwidth or arithmetic rate is more than kSlowFraction below
// the median of its kind (a GPU stuck at a lower power cap or clock, a CPU core shared with another
// job) would make its points look slow, and is named before they mislead anyone.
#include <map>
#include <string>
#include <vector>

#include "calibration/calibration.h"

namespace ks {

inline constexpr double kSlowFraction = 0.05;

// One figure of a rank below its kind's median.
struct SlowFigure {
  std::string figure;    // "memory_gbps", or "tflops.<dtype>"
  double value = 0;      // the rank's
  double median = 0;     // of the ranks with the same device
  double below_pct = 0;  // how far below the median, in percent (positive)
};

struct SlowRank {
  int rank = 0;
  std::string host;
  std::string device;
  int peers = 0;                    // ranks with the same device, itself included
  std::vector<SlowFigure> figures;  // the figures below the median by more than kSlowFraction

  // "rank 3 on node7 (NVIDIA H100 80GB HBM3): memory_gbps 2610 is 12.4% below the median of 4 (2980)"
  std::string describe() const;
};

// The ranks more than kSlowFraction below the median of the ranks that share their primary device's
// name (and backend), in rank order. Only kinds of two or more ranks are compared, and a figure only
// among the ranks that measured it.
std::vector<SlowRank> slow_ranks(const std::vector<RankCalibration>& ranks);

// A device's figures by name: memory_gbps and tflops.<dtype>, those measured.
std::map<std::string, double> figures_of(const DeviceCalibration& device);

// The figures of `values` more than kSlowFraction below the same figure of `reference` (figures
// missing from either are not compared).
std::vector<SlowFigure> figures_below(const std::map<std::string, double>& reference,
                                      const std::map<std::string, double>& values);

// The slow ranks to set aside (not to measure, not to keep the figures of): all of `slow`, except
// where every rank of a device is slow in some figure (each below the others in a different one, as
// two ranks may be): the one whose worst figure is least below its median stays, so that each
// device keeps a rank. In rank order.
std::vector<int> ranks_to_set_aside(const std::vector<SlowRank>& slow);

nlohmann::json to_json(const SlowRank& slow);

}  // namespace ks
