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

// A point not measured, with its status and why (skipped: no rank has a GPU; crashed: the rank that
// held it fell silent), recorded as of the rank `me`.
RunRecord unmeasured_record(const Point& point, const std::string& status, const std::string& message,
                            const RankIdentity& me = {}, bool on_gpu = false);

}  // namespace ks
