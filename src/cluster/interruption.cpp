#include "cluster/interruption.h"

#include <atomic>
#include <csignal>

namespace ks {
namespace {

std::atomic<int> g_stop_signal{0};

extern "C" void note_stop_signal(int signal) { g_stop_signal.store(signal); }

}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = note_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

bool stop_requested() { return g_stop_signal.load() != 0; }

}  // namespace ks
