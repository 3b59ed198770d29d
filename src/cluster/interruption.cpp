#include "cluster/interruption.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <string>

#include <fmt/format.h>

namespace ks {
namespace {

std::atomic<int> g_stop_signal{0};
pid_t g_launcher = 0;  // the parent when the handlers were installed: mpirun's daemon, slurmstepd, a shell

extern "C" void note_stop_signal(int signal) { g_stop_signal.store(signal); }

}  // namespace

void install_stop_handlers() {
  g_launcher = ::getppid();
  struct sigaction action {};
  action.sa_handler = note_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

// A process whose launcher died is adopted by another (init, a subreaper): its parent changes.
bool launcher_is_gone() { return g_launcher > 1 && ::getppid() != g_launcher; }

bool stop_requested() { return g_stop_signal.load() != 0 || launcher_is_gone(); }

std::string stop_reason() {
  const int signal = g_stop_signal.load();
  if (signal == SIGTERM) return "SIGTERM";
  if (signal == SIGINT) return "SIGINT";
  if (signal != 0) return fmt::format("signal {}", signal);
  if (launcher_is_gone()) return fmt::format("the launcher (pid {}) is gone", g_launcher);
  return "no stop requested";
}

}  // namespace ks
