// The Python worker against the C++ one: the same do_bench loop and statistics (on a synthetic clock,
// to the bit), the same protocol resolution, and the same pipe protocol (a real
// `python3 -m kernelsweep.worker` driven by the rank's WorkerProcess). Skipped where Debian's
// python3 cannot import torch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cluster/worker_process.h"
#include "common/canonical_json.h"
#include "measure/do_bench.h"
#include "measure/timer.h"
#include "record/run_record.h"
#include "support/cli_runner.h"
#include "support/python_worker.h"
#include "support/synthetic_timer.h"

namespace ks {
namespace {

using testing::SyntheticTimer;

using Json = nlohmann::json;
using testing::run_command;

constexpr const char* kPython = "/usr/bin/python3";

bool python_with_torch() {
  static const bool present = run_command(fmt::format("{} -c 'import torch' 2>/dev/null", kPython)).exit_code == 0;
  return present;
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct SyntheticCase {
  double warmup_ms, rep_ms;
  std::int64_t max_repeat;
  std::vector<std::int64_t> durations;
  std::int64_t flush_ns;
};

Json python_do_bench(const SyntheticCase& c, const Protocol& protocol, const std::vector<double>& samples) {
  Json protocol_json = protocol_to_json(protocol);
  protocol_json.erase("primaryStatistic");
  protocol_json["primary_statistic"] = protocol.primary_statistic;
  const Json request = {
      {"protocol", protocol_json}, {"durations", c.durations}, {"flush_ns", c.flush_ns}, {"samples", samples}};
  const auto out = run_command(fmt::format("PYTHONPATH={}/python {} {}/tests/python/synthetic_do_bench.py {}",
                                           KS_SOURCE_DIR, kPython, KS_SOURCE_DIR, shell_quote(request.dump())));
  EXPECT_EQ(out.exit_code, 0) << out.err;
  return Json::parse(out.out);
}

std::vector<double> as_vector(const Statistics& s) {
  return {s.median_ns, s.p20_ns, s.p80_ns, s.mean_ns, s.min_ns, s.max_ns, s.stddev_ns};
}

TEST(PythonWorker, DoBenchLoopIsTheCppLoopOnTheSameClock) {
  if (!python_with_torch()) GTEST_SKIP() << kPython << " cannot import torch";
  const std::vector<SyntheticCase> cases = {
      {25, 100, 10000, {90'000, 110'000, 100'000, 95'000, 130'000, 87'000, 101'000}, 137},  // about 0.1 ms a call
      {1, 10, 7, {3'000, 2'000}, 50'000},                                                   // the cap on repetitions
      {25, 100, 10000, {0, 1, 0}, 0},          // below what the timer can see: the 1 µs guard
      {0.5, 0.5, 10000, {40'000'000}, 1'000},  // one call longer than both budgets
  };
  const std::vector<double> fractional = {3.25, 1e9 + 0.5, 7.125, 2.0 / 3.0, 1e-3, 42.0, 42.0, 1.0 / 7.0};
  for (const SyntheticCase& c : cases) {
    ProtocolSpec spec;
    spec.warmup_ms = c.warmup_ms;
    spec.rep_ms = c.rep_ms;
    spec.max_repeat = c.max_repeat;
    spec.flush_bytes = 0;
    const Protocol protocol = resolve_protocol(spec, Backend::cpu);
    SyntheticTimer timer(c.durations, c.flush_ns);
    const Timing timing = do_bench({[&] { timer.run(); }, [] { return CheckResult{true, ""}; }}, timer, protocol);

    const Json python = python_do_bench(c, protocol, fractional);
    SCOPED_TRACE(fmt::format("durations {} flush {}", Json(c.durations).dump(), c.flush_ns));
    EXPECT_EQ(python.at("n_warmup").get<std::int64_t>(), timing.n_warmup);
    EXPECT_EQ(python.at("n_repeat").get<std::int64_t>(), timing.n_repeat);
    EXPECT_EQ(python.at("calls").get<std::size_t>(), timer.calls());
    EXPECT_EQ(python.at("samples").get<std::vector<double>>(), timing.samples_ns);
    EXPECT_EQ(python.at("statistics").get<std::vector<double>>(), as_vector(summarize(timing.samples_ns)));
    EXPECT_EQ(python.at("statistics_of_given").get<std::vector<double>>(), as_vector(summarize(fractional)));
  }
}

TEST(PythonWorker, ResolvesTheProtocolAsTheCppWorkerDoes) {
  if (!python_with_torch()) GTEST_SKIP() << kPython << " cannot import torch";
  ProtocolSpec spec;
  spec.warmup_ms = 3;
  spec.rep_ms = 17;
  spec.max_repeat = 123;
  spec.sm_clock_per_sample = false;  // the Python worker reads no per-sample clock, and says so
  for (const bool gpu : {false, true}) {
    const Json cpp = protocol_to_json(resolve_protocol(spec, gpu ? Backend::cuda : Backend::cpu));
    const Json request = {
        {"name", "do_bench"}, {"warmup_ms", 3}, {"rep_ms", 17}, {"max_repeat", 123}, {"quantiles", {0.5, 0.2, 0.8}}};
    const auto out = run_command(
        fmt::format("PYTHONPATH={}/python {} -c 'import json, sys; from kernelsweep.do_bench import resolve_protocol; "
                    "print(json.dumps(resolve_protocol(json.loads(sys.argv[1]), {}).to_json()))' {}",
                    KS_SOURCE_DIR, kPython, gpu ? "True" : "False", shell_quote(request.dump())));
    ASSERT_EQ(out.exit_code, 0) << out.err;
    EXPECT_EQ(canonical_json(Json::parse(out.out)), canonical_json(cpp)) << "gpu " << gpu;
  }
}

// The GPU's state as the Python worker puts it in a record (what it read through NVML; here given)
// is what the rank reads from a C++ worker's record: the same fields, a figure not read as null.
TEST(PythonWorker, ItsGpuStateFieldsAreTheOnesTheRankReads) {
  const auto out = run_command(fmt::format(
      "PYTHONPATH={}/python {} -c 'import json; from kernelsweep.gpu_state import record_fields; "
      "start = dict(sm_clock_mhz=1980.0, memory_clock_mhz=3201.0, power_w=402.5, temperature_c=39.0, "
      "throttle_reasons=1); "
      "end = dict(sm_clock_mhz=1635.0, memory_clock_mhz=3201.0, power_w=None, temperature_c=52.0, throttle_reasons=4); "
      "print(json.dumps(record_fields(start, end)))'",
      KS_SOURCE_DIR, kPython));
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const Json fields = Json::parse(out.out);
  std::set<std::string> names, expected;
  for (const auto& item : fields.items()) names.insert(item.key());
  for (const auto& field : gpu_state_fields()) expected.insert(field.name);
  EXPECT_EQ(names, expected);

  Json message = to_json(RunRecord{});
  message.update(fields);
  const RunRecord record = run_record_from_json(message);
  EXPECT_EQ(record.gpu_start.sm_clock_mhz, 1980);
  EXPECT_EQ(record.gpu_end.sm_clock_mhz, 1635);
  EXPECT_EQ(record.gpu_start.power_w, 402.5);
  EXPECT_TRUE(std::isnan(record.gpu_end.power_w));
  EXPECT_EQ(record.gpu_start.throttle_reasons, throttle::kGpuIdle);
  EXPECT_EQ(record.gpu_end.throttle_reasons, throttle::kSwPowerCap);
  EXPECT_TRUE(
      std::isnan(run_record_from_json(to_json(RunRecord{})).gpu_start.sm_clock_mhz));  // a worker that read none
}

// The rank's side of the pipe, unchanged, driving the Python worker.
class PythonWorkerProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!python_with_torch()) GTEST_SKIP() << kPython << " cannot import torch";
    worker_ = testing::start_python_worker(kPython);
  }
  static MeasureRequest gemm(const std::string& implementation, std::int64_t m) {
    MeasureRequest request = testing::request_for("gemm", implementation, "forward",
                                                  {{"M", m}, {"N", 24}, {"K", 40}, {"dtype", "fp32"}, {"seed", 3}});
    request.protocol.flush_bytes = 0;
    return request;
  }
  std::unique_ptr<WorkerProcess> worker_;
};

TEST_F(PythonWorkerProcess, SaysHelloWithItsInterpreterAndMeasuresAPoint) {
  const Json& hello = worker_->ensure_started();
  EXPECT_EQ(hello.at("type"), "hello");
  EXPECT_EQ(hello.at("gpu_count"), 0);
  EXPECT_FALSE(hello.at("python").at("version").get<std::string>().empty()) << hello.dump();
  EXPECT_FALSE(hello.at("python").at("torch").get<std::string>().empty()) << hello.dump();

  const MeasureResult result = worker_->measure(gemm("torch", 16));
  EXPECT_EQ(result.record.status, "passed") << result.record.message;
  EXPECT_GT(result.record.n_repeat, 0);
  EXPECT_EQ(result.record.samples_ns.size(), static_cast<std::size_t>(result.record.n_repeat));
  EXPECT_EQ(result.record.stats.median_ns, summarize(result.record.samples_ns).median_ns);
  EXPECT_EQ(result.protocol.at("timer"), "steady_clock");
  EXPECT_EQ(result.implementation.at("module"), "kernelsweep.implementations.gemm");
  EXPECT_EQ(result.implementation.at("sha256").get<std::string>().size(), 64u);
  EXPECT_NE(result.record.message.find("gemm"), std::string::npos) << "the check says what it compared";
}

TEST_F(PythonWorkerProcess, AnImplementationItDoesNotKnowIsAnErrorAndTheWorkerGoesOn) {
  worker_->ensure_started();
  const MeasureResult unknown = worker_->measure(gemm("no_such_implementation", 16));
  EXPECT_EQ(unknown.record.status, "error");
  EXPECT_NE(unknown.record.message.find("gemm/no_such_implementation"), std::string::npos) << unknown.record.message;
  worker_->release();
  EXPECT_EQ(worker_->measure(gemm("torch", 8)).record.status, "passed");
}

// The ```json blocks of docs/worker-protocol.md, in order.
std::vector<Json> documented_messages() {
  const std::string text = testing::read_text(std::string(KS_SOURCE_DIR) + "/docs/worker-protocol.md");
  std::vector<Json> out;
  for (std::size_t at = text.find("```json\n"); at != std::string::npos; at = text.find("```json\n", at)) {
    const std::size_t begin = at + 8, end = text.find("```", begin);
    std::string block = text.substr(begin, end - begin);
    for (std::size_t e = block.find("…"); e != std::string::npos; e = block.find("…"))
      block.erase(e, std::string("…").size());
    out.push_back(Json::parse(block));
    at = end + 3;
  }
  return out;
}

std::set<std::string> keys_of(const Json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

TEST_F(PythonWorkerProcess, TheDocumentedMessagesHaveTheKeysOfTheMessagesSent) {
  const std::vector<Json> documented = documented_messages();
  ASSERT_EQ(documented.size(), 3u) << "hello, measure and result";
  const Json& hello = worker_->ensure_started();
  EXPECT_EQ(keys_of(documented[0]), keys_of(hello));
  EXPECT_EQ(keys_of(documented[0]["gpu"]), keys_of(hello["gpu"]));
  EXPECT_EQ(keys_of(documented[0]["host"]), keys_of(hello["host"]));
  EXPECT_EQ(keys_of(documented[0]["python"]), keys_of(hello["python"]));

  const Json request = Json::parse(encode(gemm("torch", 8)));
  EXPECT_EQ(keys_of(documented[1]), keys_of(request));
  EXPECT_EQ(keys_of(documented[1]["point"]), keys_of(request["point"]));
  EXPECT_NO_THROW(decode_request(documented[1]));

  const MeasureResult measured = worker_->measure(gemm("torch", 8));
  const Json result = Json::parse(encode(measured));
  EXPECT_EQ(keys_of(documented[2]), keys_of(result));
  EXPECT_EQ(keys_of(documented[2]["record"]), keys_of(result["record"]));
  EXPECT_EQ(keys_of(documented[2]["protocol"]), keys_of(result["protocol"]));
  EXPECT_EQ(keys_of(documented[2]["implementation"]), keys_of(measured.implementation));
  EXPECT_NO_THROW(decode_result(documented[2]));
}

}  // namespace
}  // namespace ks
