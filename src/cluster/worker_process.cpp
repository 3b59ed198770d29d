#include "cluster/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "common/clock.h"

namespace ks {
namespace {

constexpr int kWorkerInFd = 3;
constexpr int kWorkerOutFd = 4;
constexpr auto kHelloTimeout = std::chrono::seconds(120);  // CUDA context creation can be slow

void make_pipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2 failed: ") + std::strerror(errno));
}

}  // namespace

std::string current_executable() {
  std::vector<char> buffer(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  if (n <= 0) throw std::runtime_error("cannot read /proc/self/exe");
  return std::string(buffer.data(), static_cast<std::size_t>(n));
}

WorkerProcess::WorkerProcess(std::string executable, int local_rank, std::vector<std::string> plugins)
    : executable_(std::move(executable)),
      arguments_{executable_, "worker", "--in-fd", "3", "--out-fd", "4", "--local-rank", std::to_string(local_rank)} {
  for (auto& plugin : plugins) {
    arguments_.push_back("--plugin");
    arguments_.push_back(std::move(plugin));
  }
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
    ::execv(executable_.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(to_worker[0]);
  ::close(from_worker[1]);
  pid_ = pid;
  channel_ = PipeChannel(from_worker[0], to_worker[1]);
}

const nlohmann::json& WorkerProcess::ensure_started() {
  if (pid_ > 0) return hello_;
  spawn();
  std::string text;
  if (channel_.receive(text, std::chrono::duration_cast<std::chrono::microseconds>(kHelloTimeout)) != ReadOutcome::message) {
    const std::string how = reap();
    throw std::runtime_error("worker process did not start (" + executable_ + " worker): " + how);
  }
  hello_ = nlohmann::json::parse(text);
  return hello_;
}

void WorkerProcess::begin(const MeasureRequest& request) {
  ensure_started();
  timeout_s_ = request.point.timeout_s;
  deadline_ = std::chrono::steady_clock::now() +
              std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s_));
  started_at_ = iso_utc_now();
  busy_ = true;
  channel_.send(encode(request));  // a dead worker is noticed by poll() as a closed pipe
}

std::optional<MeasureResult> WorkerProcess::poll(std::chrono::microseconds wait) {
  if (!busy_) throw std::logic_error("WorkerProcess::poll with no point in flight");
  const auto now = std::chrono::steady_clock::now();
  if (now >= deadline_) {
    ::kill(pid_, SIGKILL);
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
  MeasureResult result = decode_result(nlohmann::json::parse(text));
  if (result.worker_exits) {
    reap();
  }
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

std::string WorkerProcess::reap() {
  channel_.close();
  if (pid_ <= 0) return "was not running";
  int status = 0;
  pid_t done;
  do {
    done = ::waitpid(pid_, &status, 0);
  } while (done < 0 && errno == EINTR);
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

void WorkerProcess::stop() {
  if (pid_ <= 0) return;
  if (!busy_) channel_.send(R"({"type":"stop"})");
  else ::kill(pid_, SIGKILL);
  reap();
  busy_ = false;
}

}  // namespace ks
