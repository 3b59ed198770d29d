// A measure request and its result cross the pipe between a rank and its C++ worker as bytes, and
// between a rank and any other worker as JSON: both carry the same message.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cluster/worker_messages.h"
#include "cluster/worker_process.h"
#include "support/measured_record.h"
#include "support/python_worker.h"

namespace ks {
namespace {

MeasureRequest collective_request() {
  MeasureRequest request;
  request.point.kernel = "all_reduce";
  request.point.implementation = "nccl";
  request.point.mode = "run";
  request.point.params = {{"bytes", 4096}, {"dtype", "bf16"}, {"op", "sum"}};
  request.protocol.name = "cold";
  request.protocol.flush_bytes = 0;
  request.protocol.repetitions = 3;
  request.check = false;
  request.gang = GangSeat{{0, 3, 5}, 2, std::string(256, 'a'), 12.5};
  return request;
}

MeasureResult measured_result() {
  MeasureResult result;
  result.record = testing::cold_gpu_record();
  result.record.status = "failed";
  result.record.message = "all_reduce: 7 of 1024 elements differ; \"quoted\"\nµs";
  result.record.wrong_elements = 7;
  result.protocol = {{"name", "cold"}, {"timer", "cuda_events"}, {"quantiles", {0.5, 0.2, 0.8}}};
  result.implementation = {{"module", "kernels.triton_softmax"}, {"labels", {{"liger_version", "0.5.10"}}}};
  result.worker_exits = true;
  return result;
}

// Each message as the documented protocol writes it: what the bytes must carry too.
std::string json_of(const MeasureRequest& request) { return encode(request); }
std::string json_of(const MeasureResult& result) { return encode(result); }

TEST(WorkerMessages, ARequestCrossesAsBytesAsItDoesAsJson) {
  ParsedText protocols;
  MeasureRequest request = collective_request();
  const std::string bytes = encode_bytes(request);
  EXPECT_TRUE(is_bytes_message(bytes));
  EXPECT_FALSE(is_bytes_message(encode(request)));
  EXPECT_EQ(json_of(request_from_bytes(bytes, protocols)), json_of(request));

  request.gang.reset();
  request.check = true;
  request.protocol = ProtocolSpec{};
  const MeasureRequest back = request_from_bytes(encode_bytes(request), protocols);
  EXPECT_FALSE(back.gang.has_value());
  EXPECT_EQ(json_of(back), json_of(request)) << "a protocol that changed is read again";
}

TEST(WorkerMessages, AResultCrossesAsBytesAsItDoesAsJson) {
  ParsedText protocols, implementations;
  const MeasureResult result = measured_result();
  const MeasureResult back = result_from_bytes(encode_bytes(result), protocols, implementations);
  EXPECT_EQ(json_of(back), json_of(result));
  EXPECT_TRUE(std::isnan(back.record.sample_sm_clock_mhz[1]));

  MeasureResult cpp = result;
  cpp.implementation = Json();  // the C++ worker names no module
  cpp.worker_exits = false;
  const MeasureResult plain = result_from_bytes(encode_bytes(cpp), protocols, implementations);
  EXPECT_TRUE(plain.implementation.is_null());
  EXPECT_FALSE(plain.worker_exits);
}

// Bytes cut short anywhere, or followed by more, are refused rather than read as a message.
TEST(WorkerMessages, BytesCutShortOrRunningOnAreRefused) {
  ParsedText protocols, implementations;
  const std::string request = encode_bytes(collective_request());
  const std::string result = encode_bytes(measured_result());
  for (std::size_t cut = 0; cut < request.size(); ++cut)
    EXPECT_THROW(request_from_bytes(request.substr(0, cut), protocols), std::runtime_error) << cut;
  for (std::size_t cut = 0; cut < result.size(); ++cut)
    EXPECT_THROW(result_from_bytes(result.substr(0, cut), protocols, implementations), std::runtime_error) << cut;
  EXPECT_THROW(request_from_bytes(request + "x", protocols), std::runtime_error);
  EXPECT_THROW(result_from_bytes(result + "x", protocols, implementations), std::runtime_error);
}

// The C++ worker answers in the encoding it is asked in: bytes from a rank of its own executable,
// JSON from anything that speaks the documented protocol.
TEST(WorkerMessages, TheCppWorkerAnswersBytesWithBytesAndJsonWithJson) {
  MeasureRequest request = testing::request_for("noop", "cpu", "forward", {{"id", 7}});
  request.protocol.flush_bytes = 0;
  WorkerProcess bytes_worker(KS_CLI, 0);
  WorkerProcess json_worker({KS_CLI, "worker", "--local-rank", "0"}, {});
  for (WorkerProcess* worker : {&bytes_worker, &json_worker}) {
    const MeasureResult result = worker->measure(request);
    EXPECT_EQ(result.record.status, "passed") << result.record.message;
    EXPECT_GT(result.record.n_repeat, 0);
    EXPECT_EQ(result.record.samples_ns.size(), static_cast<std::size_t>(result.record.n_repeat));
    EXPECT_EQ(result.protocol.at("timer"), "steady_clock");
    EXPECT_TRUE(result.implementation.is_null());
    EXPECT_EQ(worker->measure(request).record.status, "passed") << "the worker goes on";
  }
}

}  // namespace
}  // namespace ks
