#include "cluster/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cluster/interruption.h"
#include "common/clock.h"

namespace ks {
namespace {

constexpr int kWorkerInFd = 3;
constexpr int kWorkerOutFd = 4;

void make_pipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2 failed: ") + std::strerror(errno));
}

}  // namespace

// How long a worker may take to say hello: CUDA context creation can be slow.
std::chrono::seconds WorkerProcess::start_timeout() {
  static const std::chrono::seconds timeout = [] {
    const char* value = std::getenv("KERNELSWEEP_WORKER_START_TIMEOUT");
    const long seconds = value ? std::atol(value) : 0;
    return std::chrono::seconds(seconds > 0 ? seconds : 120);
  }();
  return timeout;
}

std::string current_executable() {
  std::vector<char> buffer(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  if (n <= 0) throw std::runtime_error("cannot read /proc/self/exe");
  return std::string(buffer.data(), static_cast<std::size_t>(n));
}

// argv of `kernelsweep worker` for a rank (its pipes' descriptors are added by the constructor below).
static std::vector<std::string> cpp_worker_arguments(std::string executable, int local_rank,
                                                     std::vector<std::string> plugins) {
  std::vector<std::string> arguments{std::move(executable), "worker", "--local-rank", std::to_string(local_rank)};
  for (auto& plugin : plugins) {
    arguments.push_back("--plugin");
    arguments.push_back(std::move(plugin));
  }
  return arguments;
}

WorkerProcess::WorkerProcess(std::string executable, int local_rank, std::vector<std::string> plugins)
    : WorkerProcess(cpp_worker_arguments(std::move(executable), local_rank, std::move(plugins)), {}) {
  bytes_messages_ = true;  // the worker is this executable: requests and results go as bytes
}

WorkerProcess::WorkerProcess(std::vector<std::string> arguments, std::vector<std::string> environment)
    : arguments_(std::move(arguments)), environment_(std::move(environment)) {
  arguments_.insert(arguments_.end(),
                    {"--in-fd", std::to_string(kWorkerInFd), "--out-fd", std::to_string(kWorkerOutFd)});
  ::signal(SIGPIPE, SIG_IGN);  // a dead worker must show up as EPIPE, not kill the rank
}

WorkerProcess::~WorkerProcess() { stop(); }

void WorkerProcess::spawn() {
  int to_worker[2], from_worker[2];
  make_pipe(to_worker);
  make_pipe(from_worker);
  // The child may only make async-signal-safe calls before exec: its argv is ready before the fork.
  std::vector<char*> argv;
  for (std::string& argument : arguments_) argv.push_back(argument.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& entry : environment_) envp.push_back(entry.data());
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec. Move the pipe ends above the target numbers
    // first so that dup2 cannot clobber one with the other.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int in = ::fcntl(to_worker[0], F_DUPFD, 10);
    const int out = ::fcntl(from_worker[1], F_DUPFD, 10);
    if (in < 0 || out < 0 || ::dup2(in, kWorkerInFd) < 0 || ::dup2(out, kWorkerOutFd) < 0) ::_exit(126);
    ::close_range(kWorkerOutFd + 1, ~0U, 0);
    if (environment_.empty()) ::execv(argv[0], argv.data());
    else ::execvpe(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(to_worker[0]);
  ::close(from_worker[1]);
  pid_ = pid;
  channel_ = PipeChannel(from_worker[0], to_worker[1]);
}

std::string WorkerProcess::try_start() {
  spawn();
  const auto deadline = std::chrono::steady_clock::now() + start_timeout();
  std::string text;
  for (;;) {
    if (stop_requested()) {
      kill_worker();
      reap();
      throw Interrupted(fmt::format("stopped ({}) while a worker started", stop_reason()));
    }
    const auto outcome = channel_.receive(text, std::chrono::milliseconds(100));
    if (outcome == ReadOutcome::message) break;
    if (waiting_hook_) waiting_hook_();
    if (outcome == ReadOutcome::closed) return "it " + reap() + " before its hello";
    if (std::chrono::steady_clock::now() >= deadline) {
      kill_worker();  // a worker stalled before its hello would otherwise be waited for forever
      reap();
      return fmt::format("it sent no hello within {} s and was killed", start_timeout().count());
    }
  }
  const auto hello = nlohmann::json::parse(text, nullptr, false);
  if (!hello.is_object() || hello.value("type", "") != "hello") {
    kill_worker();
    reap();
    return "its first message was not a hello";
  }
  hello_ = hello;
  ++starts_;
  return "";
}

const nlohmann::json& WorkerProcess::ensure_started() {
  if (pid_ > 0) return hello_;
  std::string why;
  for (int attempt = 1; attempt <= kStartAttempts; ++attempt) {
    why = try_start();
    if (why.empty()) return hello_;
  }
  throw WorkerStartError(fmt::format("worker process ({} worker) did not start in {} attempts: {}", arguments_.front(),
                                     kStartAttempts, why));
}

void WorkerProcess::begin(const MeasureRequest& request) {
  started_at_ = iso_utc_now();
  try {
    ensure_started();
  } catch (const WorkerStartError& e) {
    start_failure_ = lost_worker("crashed", e.what());
    busy_ = true;  // poll() hands the failure over as the point's result
    return;
  }
  timeout_s_ = request.point.timeout_s + (request.gang ? kGangAbortGrace_s : 0.0);
  deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                     std::chrono::duration<double>(timeout_s_));
  started_at_ = iso_utc_now();
  busy_ = true;
  // A dead worker is noticed by poll() as a closed pipe.
  channel_.send(bytes_messages_ ? encode_bytes(request) : encode(request));
}

std::optional<MeasureResult> WorkerProcess::poll(std::chrono::microseconds wait) {
  if (!busy_) throw std::logic_error("WorkerProcess::poll with no point in flight");
  if (start_failure_) {
    busy_ = false;
    return std::exchange(start_failure_, std::nullopt);
  }
  const auto now = std::chrono::steady_clock::now();
  if (now >= deadline_) {
    kill_worker();
    reap();
    return lost_worker("timeout", fmt::format("point ran past its timeout of {} s; worker killed", timeout_s_));
  }
  const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline_ - now);
  const auto slice = std::min(wait, left);
  std::string text;
  const auto outcome = channel_.receive(text, slice);
  if (outcome == ReadOutcome::timeout) return std::nullopt;
  if (outcome == ReadOutcome::closed) {
    const std::string how = reap();
    return lost_worker("crashed", "worker process " + how + " during the point");
  }
  busy_ = false;
  MeasureResult result = is_bytes_message(text) ? result_from_bytes(text, protocols_, implementations_)
                                                : decode_result(nlohmann::json::parse(text));
  if (result.worker_exits) { reap(); }
  return result;
}

MeasureResult WorkerProcess::measure(const MeasureRequest& request) {
  begin(request);
  for (;;) {
    if (auto result = poll(std::chrono::milliseconds(100))) return *result;
  }
}

MeasureResult WorkerProcess::lost_worker(const std::string& status, const std::string& message) {
  busy_ = false;
  MeasureResult result;
  result.record.status = status;
  result.record.message = message;
  result.record.started_at = started_at_;
  result.record.ended_at = iso_utc_now();
  return result;
}

void WorkerProcess::kill_worker() {
  if (pid_ > 0) ::kill(pid_, SIGKILL);  // never kill(-1, ...): that is every process we may signal
}

std::string WorkerProcess::reap() {
  channel_.close();
  if (pid_ <= 0) return "was not running";
  int status = 0;
  pid_t done;
  do { done = ::waitpid(pid_, &status, 0); } while (done < 0 && errno == EINTR);
  pid_ = -1;
  hello_ = nlohmann::json();
  if (done < 0) return "could not be waited for";
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return fmt::format("was killed by signal {} (SIG{})", sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
  }
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  return "ended";
}

nlohmann::json WorkerProcess::ask(const nlohmann::json& message, std::chrono::seconds timeout) {
  if (busy_) throw std::logic_error("WorkerProcess::ask with a point in flight");
  ensure_started();
  channel_.send(message.dump());
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string text;
  for (;;) {
    const auto outcome = channel_.receive(text, std::chrono::milliseconds(100));
    if (outcome == ReadOutcome::message) return nlohmann::json::parse(text);
    if (outcome == ReadOutcome::closed) throw std::runtime_error("worker process " + reap() + " before it answered");
    if (waiting_hook_) waiting_hook_();
    if (std::chrono::steady_clock::now() >= deadline) {
      kill_worker();
      reap();
      throw std::runtime_error(
          fmt::format("worker process did not answer within {} s and was killed", timeout.count()));
    }
  }
}

void WorkerProcess::release() {
  if (pid_ > 0 && !busy_) channel_.send(R"({"type":"release"})");
}

void WorkerProcess::stop() {
  if (pid_ <= 0) return;
  if (busy_ || !channel_.send(R"({"type":"stop"})") || !exits_within(kStopGrace)) kill_worker();
  reap();
  busy_ = false;
}

bool WorkerProcess::exits_within(std::chrono::milliseconds grace) const {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (;;) {
    siginfo_t info{};
    // WNOWAIT: the ended worker stays a zombie until reap() collects how it ended.
    const int waited = ::waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT);
    if (waited < 0 && errno != EINTR) return true;  // no such child: nothing left to wait for
    if (waited == 0 && info.si_pid == pid_) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace ks
