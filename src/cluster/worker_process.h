#pragma once
// The rank's side of its worker: starts `kernelsweep worker` with fork+exec, hands it one point at a
// time and watches it. A worker that dies yields `crashed`, one that overruns the point's timeout is
// killed and yields `timeout`; either way the next point gets a fresh worker. A worker that does not
// start (it dies or stays silent before its hello) is killed and started again, up to
// kStartAttempts times; then the point it was for is `crashed` with the reason, and the next point
// tries afresh. Every wait has a deadline, and a stop request (cluster/interruption.h) ends it.
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include <vector>

#include <nlohmann/json.hpp>

#include "cluster/worker_messages.h"

namespace ks {

// A worker that could not be started after kStartAttempts attempts.
struct WorkerStartError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class WorkerProcess {
 public:
  static constexpr int kStartAttempts = 3;
  // How long one start may take before the worker is killed: 120 s, or KERNELSWEEP_WORKER_START_TIMEOUT.
  static std::chrono::seconds start_timeout();

  // `plugins`: the plugin libraries the worker loads (the rank's own), passed as --plugin.
  WorkerProcess(std::string executable, int local_rank, std::vector<std::string> plugins = {});
  // A worker started as `arguments` (argv) with `environment` ("KEY=VALUE"; empty: this process's,
  // and the program is not looked up on PATH): the Python worker. It is given its pipes as
  // --in-fd 3 --out-fd 4.
  WorkerProcess(std::vector<std::string> arguments, std::vector<std::string> environment);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Starts the worker if none is running and returns its hello message. Throws WorkerStartError
  // when it cannot be started, Interrupted when a stop is requested meanwhile.
  const nlohmann::json& ensure_started();
  bool busy() const { return busy_; }

  // Sends a point; the result is collected with poll() (`crashed` when no worker would start).
  void begin(const MeasureRequest& request);
  // Waits up to `wait` for the point in flight; nullopt while it is still running. Crashes and
  // timeouts come back as results with those statuses.
  std::optional<MeasureResult> poll(std::chrono::microseconds wait);
  // begin + poll until done.
  MeasureResult measure(const MeasureRequest& request);

  // Ends the worker: an idle one is told to stop and killed if it has not exited within
  // kStopGrace (one stuck in its driver would otherwise hold the rank), a busy one is killed.
  void stop();
  // One exchange with an idle worker outside a point (started if needed): sends `message`, returns
  // its answer. Throws std::runtime_error when the worker dies or is silent for `timeout` (then it is
  // killed).
  nlohmann::json ask(const nlohmann::json& message, std::chrono::seconds timeout);
  // How many workers this process has started: a worker's state (what it keeps) belongs to one start.
  int starts() const { return starts_; }
  bool running() const { return pid_ > 0; }

  // A collective's worker aborts its communicator at the point's timeout; the rank kills it only
  // this much later, so that the abort is what ends the point.
  static constexpr double kGangAbortGrace_s = 15;

  // Tells an idle worker to let go of what it keeps between points (the instance of the last shape),
  // so that the device memory is free for another worker's point.
  void release();

  // Called about every 100 ms while a worker is being started (it may take minutes): the rank's
  // chance to stay responsive meanwhile. Null: nothing.
  void set_waiting_hook(std::function<void()> hook) { waiting_hook_ = std::move(hook); }

 private:
  void spawn();
  // One start: spawn and wait for the hello; the reason it failed, or empty.
  std::string try_start();
  MeasureResult lost_worker(const std::string& status, const std::string& message);
  std::string reap();  // waits for the child and says how it ended
  void kill_worker();  // SIGKILL to the worker, if there is one
  static constexpr std::chrono::seconds kStopGrace{5};
  bool exits_within(std::chrono::milliseconds grace) const;  // leaves the ended worker to reap()

  std::vector<std::string> arguments_;    // argv of the worker (the executable first), made before fork (see spawn)
  std::vector<std::string> environment_;  // empty: this process's environment
  pid_t pid_ = -1;
  PipeChannel channel_;
  // The C++ worker of this executable gets its requests, and sends its results, as bytes
  // (worker_messages.h); any other worker speaks JSON.
  bool bytes_messages_ = false;
  ParsedText protocols_, implementations_;  // of the results received as bytes
  nlohmann::json hello_;
  bool busy_ = false;
  int starts_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  double timeout_s_ = 0;
  std::string started_at_;
  std::optional<MeasureResult> start_failure_;  // the point in flight could not be started
  std::function<void()> waiting_hook_;
};

// The path of the running executable (/proc/self/exe): workers are the same binary.
std::string current_executable();

}  // namespace ks
