#pragma once
// A record as a cold measurement on a GPU fills it, for the tests of the messages that carry records
// between processes.
#include "record/run_record.h"

namespace ks::testing {

// What the measurement fills: its times, three timed repetitions of about 8 ms (the SM clock of the
// second not read), the GPU's state around them and how the cold protocol ended (its noise, its goal
// met, samples dropped). Which point it is, and its status, are the caller's to set.
RunRecord cold_gpu_record();

}  // namespace ks::testing
