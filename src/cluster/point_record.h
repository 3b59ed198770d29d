#pragma once
// The record of one measured point as the measuring rank completes it (cluster/run_record.h): the
// worker's result, with the point, where it ran, its quantiles, its rates and its speed of light.
#include <string>

#include "cluster/sweep_runner.h"
#include "cluster/worker_messages.h"
#include "plan/point.h"
#include "record/run_record.h"

namespace ks {

// The worker's measurement completed with the point and where it ran (`me`, on its GPU or its CPU):
// the record as it stays.
RunRecord make_record(const Point& point, const MeasureResult& r, const RankIdentity& me, bool on_gpu);

// A point not run here, with why (no rank has a GPU, ...).
RunRecord skipped_record(const Point& point, const std::string& reason);

// Whether the worker timed the point on the GPU: a cuda implementation, or an `any` one that the
// worker ran on the rank's GPU (its protocol's timer says so).
bool timed_on_gpu(bool needs_gpu, const MeasureResult& result);

}  // namespace ks
