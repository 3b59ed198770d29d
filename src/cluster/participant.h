#pragma once
// Every rank's part in a sweep, rank 0's included: it meets the other ranks before the loop (the same
// sweep file, no shared GPU, every rank's identity and calibration on rank 0), drives its workers, and
// completes the record of each point it measures. A rank other than 0 runs the loop here: it asks
// rank 0 for work, measures, and sends back each result (cluster/messaging.h), keeping a heartbeat.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "calibration/sentinel.h"
#include "cluster/gang.h"
#include "cluster/messaging.h"
#include "cluster/sweep_runner.h"
#include "cluster/workers.h"
#include "kernelindex/run_documents.h"

namespace ks {

class Participant {
 public:
  Participant(const MpiWorld& world, const ProtocolSpec& protocol, const RunOptions& options);

  // Before the loop, every rank together: every rank's identity, on rank 0 (empty elsewhere). Throws
  // RunError when the ranks read different sweep files or share a GPU. `plan_in_python`: rank 0's plan
  // has Python implementations (the other ranks' value is not read).
  std::vector<RankIdentity> introduce(bool plan_in_python);
  // The loop of a rank other than 0, until rank 0 has no more work for it: why it stopped before the
  // end, or an empty string.
  std::string run();

  // The record of `point` as this rank measured it.
  RunRecord record_of(const Point& point, const MeasureResult& result) const;
  // From here on, this rank makes the kernelindex documents of the records it sends, carrying the
  // run's `labels`: rank 0 then only writes them.
  void make_documents(RunLabels labels);
  // The sentinel, when it is due: the line to log when the rank's devices drifted from their
  // calibration or came back (empty otherwise); `duties` done while its probe runs.
  std::string check_sentinel(const std::function<void()>& duties);
  // A collective point measured with its gang: the result on the gang's first member.
  std::optional<MeasureResult> measure_in_gang(const Assigned& assigned, const std::function<void()>& duties);
  // Starts the worker on `assigned`'s point.
  void begin(const Assigned& assigned);

  Workers& workers() { return workers_; }
  GangCommunicators& gangs() { return gangs_; }
  // The slow ranks (ranks_to_set_aside), as rank 0 found them in introduce().
  const std::vector<int>& set_aside() const { return set_aside_; }

 private:
  void check_sweep_is_shared() const;
  void check_gpus_not_shared() const;
  nlohmann::json first_hello();
  nlohmann::json python_facts(bool plan_in_python);
  std::optional<RankCalibration> calibrate();
  void keep_calibration(const std::vector<int>& slow);
  ProbeResult run_probe(const Point& point, const std::function<void()>& duties);
  bool asked_to_stop();
  std::string why_stop() const;
  std::vector<Assigned> receive_assignment();
  MeasureResult measure_alone(const Assigned& assigned);
  void keep_in_touch();
  void send_result(const Point& point, const MeasureResult& result);

  const MpiWorld& world_;
  const ProtocolSpec& protocol_;
  const RunOptions& options_;
  Workers workers_;
  RankIdentity me_;
  GangCommunicators gangs_;
  Sentinel sentinel_;                      // off unless the run asks for it and the rank is calibrated
  std::vector<int> set_aside_;             // the slow ranks, as rank 0 found them at the start
  ParticipantLink link_;                   // a rank other than 0's, to rank 0
  std::optional<RunDocuments> documents_;  // where this rank makes its records' documents
  bool asked_to_stop_ = false;             // rank 0 said the run is interrupted
};

}  // namespace ks
