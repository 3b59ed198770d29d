#include "cluster/interruption.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

namespace ks {
namespace {

std::atomic<int> g_stop_signal{0};
pid_t g_launcher = 0;  // the parent when the handlers were installed: mpirun's daemon, slurmstepd, a shell

extern "C" void note_stop_signal(int signal) { g_stop_signal.store(signal); }

// The stop file: its path, when it was last looked for, and what it said once it appeared.
std::filesystem::path g_stop_file;
std::chrono::steady_clock::time_point g_stop_file_checked;
std::string g_stop_file_reason;
bool g_stop_file_seen_empty = false;
constexpr auto kStopFileInterval = std::chrono::milliseconds(250);

// Looked for four times a second at most: the loops ask far more often, and the file may be on a
// parallel filesystem. A file found empty is read once more at the next look before the run stops:
// `echo REASON > FILE` creates the file before it writes the line, and the line is the reason given.
bool stop_file_appeared() {
  if (g_stop_file.empty()) return false;
  if (!g_stop_file_reason.empty()) return true;
  const auto now = std::chrono::steady_clock::now();
  if (now - g_stop_file_checked < kStopFileInterval) return false;
  g_stop_file_checked = now;
  std::error_code error;
  if (!std::filesystem::exists(g_stop_file, error)) return false;
  std::ifstream in(g_stop_file);
  std::getline(in, g_stop_file_reason);
  if (g_stop_file_reason.empty() && !g_stop_file_seen_empty) {
    g_stop_file_seen_empty = true;
    return false;
  }
  if (g_stop_file_reason.empty()) g_stop_file_reason = "stop file " + g_stop_file.string();
  return true;
}

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

void watch_stop_file(const std::string& path) {
  g_stop_file = path;
  g_stop_file_reason.clear();
  g_stop_file_seen_empty = false;
}

bool stop_requested() { return g_stop_signal.load() != 0 || launcher_is_gone() || stop_file_appeared(); }

std::string stop_reason() {
  const int signal = g_stop_signal.load();
  if (signal != 0) return signal == SIGTERM ? "SIGTERM" : "SIGINT";  // the two signals it handles
  if (launcher_is_gone()) return fmt::format("the launcher (pid {}) is gone", g_launcher);
  if (!g_stop_file_reason.empty()) return g_stop_file_reason;
  return "no stop requested";
}

}  // namespace ks
