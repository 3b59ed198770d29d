// The HDF5 results file: round trips through ResultsFile, and the same file read by plain HDF5
// (the C API and h5dump) as any other tool would; resume, refusal to overwrite, crash safety.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <hdf5.h>

#include "store/results_file.h"
#include "store/space_reserve.h"
#include "store/summary.h"
#include "support/small_disk.h"

namespace ks {
namespace {

namespace fs = std::filesystem;

// A record whose every field derives from `i`, with `n_samples` raw samples.
StoredRun make_record(int i, int n_samples) {
  StoredRun r;
  r.point_id = "point-" + std::to_string(i);
  r.kernel = i % 2 == 0 ? "gemm" : "distill_cosine_loss";
  r.implementation = "cpu";
  r.mode = i % 3 == 0 ? "fwd" : "bwd";
  r.params_json = "{\"m\":" + std::to_string(64 * i) + ",\"dtype\":\"bf16\"}";
  r.status = i % 5 == 4 ? "failed" : "passed";
  r.message = i % 5 == 4 ? "max abs error 0.5 > 0.01 (é)" : "";
  r.rank = i % 3;
  r.host = "node" + std::to_string(i % 2);
  r.gpu_uuid = i % 2 == 0 ? "GPU-0000-" + std::to_string(i) : "";
  r.started_at = "2026-11-30T12:00:" + std::to_string(10 + i % 50) + ".000Z";
  r.ended_at = "2026-11-30T12:01:" + std::to_string(10 + i % 50) + ".500Z";
  r.n_warmup = 10 + i;
  r.n_repeat = n_samples;
  r.stats = {1000.25 + i, 900.5 + i, 1100.75 + i, 1001.0 + i, 800.0 + i, 1300.0 + i, 12.5 + i};
  r.flops = 2.0 * i * 1e9;
  r.bytes = 3.0 * i * 1e6;
  r.tflops = 0.25 * i;
  r.gbps = 1.5 * i;
  r.device_peak_bytes = 1000000ull * static_cast<std::uint64_t>(i);
  r.cited.protocol_digest = "sha256:protocol" + std::to_string(i % 2);
  r.cited.environment_digest = "sha256:environment" + std::to_string(i % 3);
  r.cited.workload_digest = "sha256:workload" + std::to_string(i);
  r.cited.implementation_digest = "sha256:implementation" + std::to_string(i % 4);
  for (int k = 0; k < n_samples; ++k) r.samples_ns.push_back(1000.0 * i + k + 0.5);
  if (n_samples > 0) r.quantiles = {{0.5, 1000.0 * i + 0.25}, {0.1, 1000.0 * i - 3.5}, {0.9, 1000.0 * i + 7.75}};
  if (!r.gpu_uuid.empty()) {  // the GPU's state as NVML gives it, a power cap on every fourth
    r.gpu_start = {1980.0 - i, 2619.0, 350.5 + i, 41.0 + i % 7,
                   i % 4 == 0 ? throttle::kSwPowerCap : throttle::kGpuIdle};
    r.gpu_end = {1755.0 - i, 2619.0, 699.25 + i, 48.0 + i % 7,
                 i % 4 == 0 ? throttle::kSwPowerCap | throttle::kSwThermalSlowdown : 0};
    for (int k = 0; k < n_samples; ++k) r.sample_sm_clock_mhz.push_back(1500.0 + i + k * 0.5);
    if (i % 3 == 0) {  // an energy figure from a window of a second or more
      r.joules_per_call = 0.25 + i * 1e-3;
      r.gflops_per_joule = 512.5 + i;
      r.energy_window_s = 1.0 + i * 0.01;
    }
  }
  if (i % 5 == 0) {  // a cold measurement's record
    r.noise = {0.0125 + i * 1e-4, i % 10 == 0 ? 1 : 0, i};
    r.sample_sm_clock_min_mhz = 1485.5 + i;
    r.sample_sm_clock_median_mhz = 1590.25 + i;
  }
  return r;
}

std::vector<StoredRun> make_batch(int first, int count, int samples_base) {
  std::vector<StoredRun> batch;
  for (int i = first; i < first + count; ++i) batch.push_back(make_record(i, (i * 7 + samples_base) % 13));
  return batch;
}

RunInfo make_info() {
  RunInfo info;
  info.sweep_name = "store-test";
  info.sweep_path = "configs/store-test.yaml";
  info.sweep_text = "name: store-test\nkernels:\n  - kernel: gemm\n    params: {m: [64, 128]}\n";
  info.plan_size = 42;
  info.kernelsweep_version = "0.1.0";
  info.git_commit = "0123456789ab";
  info.started_at = "2026-11-30T12:00:00.000Z";
  info.world_size = 4;
  info.host = "node0";
  info.command_line = "kernelsweep run configs/store-test.yaml";
  return info;
}

// The same figure, or neither measured (NaN).
bool same_figure(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void expect_same_statistics(const Statistics& got, const Statistics& want) {
  EXPECT_EQ(got.median_ns, want.median_ns);
  EXPECT_EQ(got.p20_ns, want.p20_ns);
  EXPECT_EQ(got.p80_ns, want.p80_ns);
  EXPECT_EQ(got.mean_ns, want.mean_ns);
  EXPECT_EQ(got.min_ns, want.min_ns);
  EXPECT_EQ(got.max_ns, want.max_ns);
  EXPECT_EQ(got.stddev_ns, want.stddev_ns);
}

void expect_same_citations(const Citations& got, const Citations& want) {
  EXPECT_EQ(got.protocol_digest, want.protocol_digest);
  EXPECT_EQ(got.environment_digest, want.environment_digest);
  EXPECT_EQ(got.workload_digest, want.workload_digest);
  EXPECT_EQ(got.implementation_digest, want.implementation_digest);
}

// The GPU's state at the start or the end (`when`) of the timed repetitions.
void expect_same_gpu_state(const std::string& when, const GpuState& got, const GpuState& want) {
  SCOPED_TRACE("GPU state at the " + when);
  EXPECT_TRUE(same_figure(got.sm_clock_mhz, want.sm_clock_mhz));
  EXPECT_TRUE(same_figure(got.memory_clock_mhz, want.memory_clock_mhz));
  EXPECT_TRUE(same_figure(got.power_w, want.power_w));
  EXPECT_TRUE(same_figure(got.temperature_c, want.temperature_c));
  EXPECT_EQ(got.throttle_reasons, want.throttle_reasons);
}

void expect_same_row(const StoredRun& got, const StoredRun& want) {
  SCOPED_TRACE("point " + want.point_id);
  EXPECT_EQ(got.point_id, want.point_id);
  EXPECT_EQ(got.kernel, want.kernel);
  EXPECT_EQ(got.implementation, want.implementation);
  EXPECT_EQ(got.mode, want.mode);
  EXPECT_EQ(got.params_json, want.params_json);
  EXPECT_EQ(got.status, want.status);
  EXPECT_EQ(got.message, want.message);
  EXPECT_EQ(got.rank, want.rank);
  EXPECT_EQ(got.host, want.host);
  EXPECT_EQ(got.gpu_uuid, want.gpu_uuid);
  EXPECT_EQ(got.started_at, want.started_at);
  EXPECT_EQ(got.ended_at, want.ended_at);
  EXPECT_EQ(got.n_warmup, want.n_warmup);
  EXPECT_EQ(got.n_repeat, want.n_repeat);
  expect_same_statistics(got.stats, want.stats);
  EXPECT_EQ(got.flops, want.flops);
  EXPECT_EQ(got.bytes, want.bytes);
  EXPECT_EQ(got.tflops, want.tflops);
  EXPECT_EQ(got.gbps, want.gbps);
  EXPECT_EQ(got.device_peak_bytes, want.device_peak_bytes);
  expect_same_citations(got.cited, want.cited);
  EXPECT_EQ(got.samples_offset, want.samples_offset);
  EXPECT_EQ(got.samples_count, want.samples_count);
  EXPECT_EQ(got.quantiles_offset, want.quantiles_offset);
  EXPECT_EQ(got.quantiles_count, want.quantiles_count);
  EXPECT_EQ(got.sample_clocks_offset, want.sample_clocks_offset);
  EXPECT_EQ(got.sample_clocks_count, want.sample_clocks_count);
  EXPECT_EQ(got.repetition, want.repetition);
  EXPECT_TRUE(same_figure(got.noise.noise, want.noise.noise));
  EXPECT_EQ(got.noise.goal_met, want.noise.goal_met);
  EXPECT_EQ(got.noise.samples_dropped, want.noise.samples_dropped);
  EXPECT_TRUE(same_figure(got.sample_sm_clock_min_mhz, want.sample_sm_clock_min_mhz));
  EXPECT_TRUE(same_figure(got.sample_sm_clock_median_mhz, want.sample_sm_clock_median_mhz));
  EXPECT_TRUE(same_figure(got.joules_per_call, want.joules_per_call));
  EXPECT_TRUE(same_figure(got.gflops_per_joule, want.gflops_per_joule));
  EXPECT_TRUE(same_figure(got.energy_window_s, want.energy_window_s));
  expect_same_gpu_state("start", got.gpu_start, want.gpu_start);
  expect_same_gpu_state("end", got.gpu_end, want.gpu_end);
}

// Every row equals the record appended, and its samples are where the row says.
void expect_rows_and_samples(const ResultsFile& file, const std::vector<StoredRun>& appended) {
  const std::vector<StoredRun> rows = file.read_runs();
  ASSERT_EQ(rows.size(), appended.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    expect_same_row(rows[i], appended[i]);
    EXPECT_EQ(file.read_samples(rows[i].samples_offset, rows[i].samples_count), appended[i].samples_ns);
    EXPECT_EQ(file.read_sample_clocks(rows[i].sample_clocks_offset, rows[i].sample_clocks_count),
              appended[i].sample_sm_clock_mhz);
    const auto quantiles = file.read_quantiles(rows[i].quantiles_offset, rows[i].quantiles_count);
    ASSERT_EQ(quantiles.size(), appended[i].quantiles.size());
    for (std::size_t q = 0; q < quantiles.size(); ++q) {
      EXPECT_EQ(quantiles[q].quantile, appended[i].quantiles[q].quantile);
      EXPECT_EQ(quantiles[q].value_ns, appended[i].quantiles[q].value_ns);
    }
  }
}

std::string shell_output(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string output;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe.get())) output.append(buffer, n);
  return output;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("ks_store_test_" + std::to_string(getpid()) + "_" + test->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path file_path() const { return dir_ / "results.h5"; }

  // Creates the file, appends the batches (flushing after each), finishes it; returns every record
  // appended, with the samples_offset/samples_count the store set.
  std::vector<StoredRun> write_file(std::vector<std::vector<StoredRun>> batches) {
    ResultsFile file = ResultsFile::create(file_path(), make_info());
    std::vector<StoredRun> appended;
    for (auto& batch : batches) {
      file.append(batch);
      file.flush();
      appended.insert(appended.end(), batch.begin(), batch.end());
    }
    file.put_environment("sha256:environment0", R"({"apiVersion":"kernelindex.dev/v1alpha1"})");
    file.put_protocol("sha256:protocol0", R"({"spec":{"name":"do_bench"}})");
    file.put_rank({0, "node0", 0, "GPU-aaaa", "0000:18:00.0", "NVIDIA H200"});
    file.put_rank({1, "node0", -1, "", "", ""});
    file.finish("2026-11-30T13:00:00.000Z");
    return appended;
  }

  fs::path dir_;
};

TEST_F(StoreTest, RoundTripsEveryColumnAndTheSamples) {
  std::vector<StoredRun> repeated = make_batch(5, 7, 3);  // points measured again (a protocol's repetitions)
  for (std::size_t k = 0; k < repeated.size(); ++k) repeated[k].repetition = static_cast<std::int32_t>(k % 3);
  const std::vector<StoredRun> appended = write_file({make_batch(0, 5, 0), repeated, {}, make_batch(12, 3, 5)});

  ResultsFile file = ResultsFile::open_read_only(file_path());
  expect_rows_and_samples(file, appended);

  // Offsets are consecutive: /samples holds exactly the samples of the rows, in row order.
  std::uint64_t expected_offset = 0;
  for (const StoredRun& record : appended) {
    EXPECT_EQ(record.samples_offset, expected_offset);
    EXPECT_EQ(record.samples_count, record.samples_ns.size());
    expected_offset += record.samples_count;
  }
  EXPECT_EQ(file.sample_count(), expected_offset);
  EXPECT_EQ(file.run_count(), appended.size());
}

TEST_F(StoreTest, RootAttributesRanksAndSessionsRoundTrip) {
  write_file({make_batch(0, 3, 0)});
  ResultsFile file = ResultsFile::open_read_only(file_path());

  const RunInfo want = make_info();
  const RunInfo info = file.read_info();
  EXPECT_EQ(info.sweep_name, want.sweep_name);
  EXPECT_EQ(info.sweep_path, want.sweep_path);
  EXPECT_EQ(info.sweep_text, want.sweep_text);
  EXPECT_EQ(info.plan_size, want.plan_size);
  EXPECT_EQ(info.kernelsweep_version, want.kernelsweep_version);
  EXPECT_EQ(info.git_commit, want.git_commit);
  EXPECT_EQ(info.started_at, want.started_at);
  EXPECT_EQ(info.ended_at, "2026-11-30T13:00:00.000Z");
  EXPECT_EQ(info.world_size, want.world_size);
  EXPECT_EQ(info.host, want.host);
  EXPECT_EQ(info.command_line, want.command_line);
  EXPECT_EQ(info.layout_version, kResultsLayoutVersion);

  const std::vector<RankInfo> ranks = file.read_ranks();
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0], (RankInfo{0, "node0", 0, "GPU-aaaa", "0000:18:00.0", "NVIDIA H200"}));
  EXPECT_EQ(ranks[1], (RankInfo{1, "node0", -1, "", "", ""}));

  const std::vector<SessionInfo> sessions = file.read_sessions();
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_EQ(sessions[0].started_at, want.started_at);
  EXPECT_EQ(sessions[0].world_size, want.world_size);
  EXPECT_EQ(sessions[0].command_line, want.command_line);
}

TEST_F(StoreTest, PlainHdf5CApiReadsAColumnTheSamplesAndAnAttribute) {
  const std::vector<StoredRun> appended = write_file({make_batch(0, 4, 0), make_batch(4, 6, 1)});

  hid_t file = H5Fopen(file_path().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  hid_t runs = H5Dopen2(file, "/runs", H5P_DEFAULT);
  ASSERT_GE(runs, 0);

  // A partial compound type: only the median, read by member name, as any HDF5 program would.
  hid_t median_only = H5Tcreate(H5T_COMPOUND, sizeof(double));
  H5Tinsert(median_only, "median_ns", 0, H5T_NATIVE_DOUBLE);
  std::vector<double> medians(appended.size());
  ASSERT_GE(H5Dread(runs, median_only, H5S_ALL, H5S_ALL, H5P_DEFAULT, medians.data()), 0);
  for (std::size_t i = 0; i < appended.size(); ++i) EXPECT_EQ(medians[i], appended[i].stats.median_ns);

  struct OffsetCount {
    std::uint64_t offset, count;
  };
  hid_t offsets_only = H5Tcreate(H5T_COMPOUND, sizeof(OffsetCount));
  H5Tinsert(offsets_only, "samples_offset", HOFFSET(OffsetCount, offset), H5T_NATIVE_UINT64);
  H5Tinsert(offsets_only, "samples_count", HOFFSET(OffsetCount, count), H5T_NATIVE_UINT64);
  std::vector<OffsetCount> spans(appended.size());
  ASSERT_GE(H5Dread(runs, offsets_only, H5S_ALL, H5S_ALL, H5P_DEFAULT, spans.data()), 0);

  hid_t samples = H5Dopen2(file, "/samples", H5P_DEFAULT);
  ASSERT_GE(samples, 0);
  hid_t space = H5Dget_space(samples);
  std::vector<double> all(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  ASSERT_GE(H5Dread(samples, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all.data()), 0);
  for (std::size_t i = 0; i < appended.size(); ++i) {
    const std::vector<double> run_samples(all.begin() + static_cast<std::ptrdiff_t>(spans[i].offset),
                                          all.begin() + static_cast<std::ptrdiff_t>(spans[i].offset + spans[i].count));
    EXPECT_EQ(run_samples, appended[i].samples_ns) << "row " << i;
  }

  hid_t plan_size_attribute = H5Aopen(file, "plan_size", H5P_DEFAULT);
  std::int64_t plan_size = 0;
  ASSERT_GE(H5Aread(plan_size_attribute, H5T_NATIVE_INT64, &plan_size), 0);
  EXPECT_EQ(plan_size, 42);

  H5Aclose(plan_size_attribute);
  H5Sclose(space);
  H5Dclose(samples);
  H5Tclose(offsets_only);
  H5Tclose(median_only);
  H5Dclose(runs);
  H5Fclose(file);
}

TEST_F(StoreTest, H5dumpShowsTheLayoutAndTheValues) {
  write_file({make_batch(0, 3, 0)});
  const std::string dump = shell_output("h5dump " + file_path().string() + " 2>&1");

  for (const char* dataset : {"runs", "samples", "environments", "protocols", "ranks", "sessions"}) {
    EXPECT_NE(dump.find(std::string("DATASET \"") + dataset + "\""), std::string::npos) << dataset;
  }
  for (const char* attribute : {"sweep_text", "plan_size", "started_at", "ended_at", "world_size", "git_commit"}) {
    EXPECT_NE(dump.find(std::string("ATTRIBUTE \"") + attribute + "\""), std::string::npos) << attribute;
  }
  EXPECT_NE(dump.find("H5T_STRING"), std::string::npos);
  EXPECT_NE(dump.find("H5T_IEEE_F64LE \"median_ns\""), std::string::npos);
  EXPECT_NE(dump.find("\"point-2\""), std::string::npos);
  EXPECT_NE(dump.find("1002.25"), std::string::npos);  // point-2's median
  EXPECT_NE(dump.find("\"store-test\""), std::string::npos);
}

TEST_F(StoreTest, ReopenForAppendExtendsWithoutTouchingOldRows) {
  std::vector<StoredRun> appended = write_file({make_batch(0, 6, 0)});

  {
    ResultsFile file = ResultsFile::open_for_append(file_path());
    EXPECT_EQ(file.read_info().ended_at, "2026-11-30T13:00:00.000Z") << "opened, nothing measured yet";
    file.add_session({"2026-12-01T08:00:00.000Z", 2, "node7", "kernelsweep run --resume", "0.1.0", "0123456789ab"});
    EXPECT_EQ(file.read_info().ended_at, "") << "a resumed session is unfinished until finish()";
    std::vector<StoredRun> more = make_batch(6, 4, 2);
    file.append(more);
    file.put_environment("sha256:environment0", "{\"different\":\"text, same digest\"}");
    file.put_protocol("sha256:protocol1", "{}");
    file.put_rank({0, "node0", 0, "GPU-aaaa", "0000:18:00.0", "NVIDIA H200"});
    file.finish("2026-12-01T09:00:00.000Z");
    ASSERT_GT(more.front().samples_offset, 0u);
    appended.insert(appended.end(), more.begin(), more.end());
  }

  ResultsFile file = ResultsFile::open_read_only(file_path());
  expect_rows_and_samples(file, appended);
  EXPECT_EQ(file.read_info().ended_at, "2026-12-01T09:00:00.000Z");
  EXPECT_EQ(file.read_info().started_at, make_info().started_at);
  ASSERT_EQ(file.read_sessions().size(), 2u);
  EXPECT_EQ(file.read_sessions()[1].host, "node7");
  // Digests stored by the first session are not stored again.
  ASSERT_EQ(file.read_environments().size(), 1u);
  EXPECT_EQ(file.read_environments()[0].json, R"({"apiVersion":"kernelindex.dev/v1alpha1"})");
  EXPECT_EQ(file.read_protocols().size(), 2u);
  EXPECT_EQ(file.read_ranks().size(), 2u);
}

TEST_F(StoreTest, CreateRefusesAnExistingPath) {
  std::ofstream(file_path()) << "not replaced";
  try {
    ResultsFile::create(file_path(), make_info());
    FAIL() << "create() replaced an existing file";
  } catch (const ResultsFileError& error) {
    EXPECT_NE(std::string(error.what()).find("already exists"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(file_path().string()), std::string::npos) << error.what();
  }
  std::ifstream in(file_path());
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "not replaced");
}

TEST_F(StoreTest, OpeningAFileThatIsNotOursSaysSo) {
  std::ofstream(file_path()) << "plain text";
  EXPECT_THROW(ResultsFile::open_for_append(file_path()), ResultsFileError);
  EXPECT_THROW(ResultsFile::open_read_only(dir_ / "missing.h5"), ResultsFileError);
}

// A writer killed without closing (Slurm time limit, OOM killer) leaves a file that opens, with every
// row appended before its last flush intact, and that --resume can append to.
TEST_F(StoreTest, CrashAfterFlushKeepsFlushedRows) {
  std::vector<StoredRun> flushed = make_batch(0, 40, 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      ResultsFile file = ResultsFile::create(file_path(), make_info());
      std::vector<StoredRun> first = make_batch(0, 40, 0);
      file.append(first);
      file.flush();
      std::vector<StoredRun> unflushed = make_batch(40, 30, 4);
      file.append(unflushed);
      file.put_protocol("sha256:late", "{}");
    } catch (...) { _exit(1); }
    _exit(9);  // no close, no destructors, no atexit: as abrupt as a kill
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 9) << "the child failed before its crash";

  // The rows are those of the flushed batch, whatever part of the unflushed one reached the disk.
  std::uint64_t offset = 0, quantiles_offset = 0, clocks_offset = 0;
  for (StoredRun& record : flushed) {
    record.samples_offset = offset;
    record.samples_count = record.samples_ns.size();
    offset += record.samples_count;
    record.sample_clocks_offset = clocks_offset;
    record.sample_clocks_count = record.sample_sm_clock_mhz.size();
    clocks_offset += record.sample_clocks_count;
    record.quantiles_offset = quantiles_offset;
    record.quantiles_count = record.quantiles.size();
    quantiles_offset += record.quantiles_count;
  }
  {
    ResultsFile file = ResultsFile::open_read_only(file_path());
    EXPECT_EQ(file.read_info().ended_at, "");
    std::vector<StoredRun> rows = file.read_runs();
    ASSERT_GE(rows.size(), flushed.size());
    for (std::size_t i = 0; i < flushed.size(); ++i) {
      expect_same_row(rows[i], flushed[i]);
      EXPECT_EQ(file.read_samples(rows[i].samples_offset, rows[i].samples_count), flushed[i].samples_ns);
    }
  }

  ResultsFile resumed = ResultsFile::open_for_append(file_path());
  const std::uint64_t rows_before = resumed.run_count();
  std::vector<StoredRun> more = make_batch(100, 5, 1);
  resumed.append(more);
  resumed.finish("2026-11-30T14:00:00.000Z");
  ResultsFile reread = ResultsFile::open_read_only(file_path());
  ASSERT_EQ(reread.run_count(), rows_before + more.size());
  const std::vector<StoredRun> rows = reread.read_runs();
  for (std::size_t i = 0; i < more.size(); ++i) expect_same_row(rows[rows_before + i], more[i]);
}

// A full disk, for real: the file on a small tmpfs of its own (root only; skipped elsewhere).
class FullDiskTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    std::string why;
    disk_ = testing::SmallDisk::make(dir_ / "disk", 40, why);
    if (!disk_) GTEST_SKIP() << why;
  }
  void TearDown() override {
    disk_.reset();
    StoreTest::TearDown();
  }
  fs::path file_on_disk() const { return disk_->path() / "results.h5"; }

  std::unique_ptr<testing::SmallDisk> disk_;
};

TEST_F(FullDiskTest, StopsTheWriteBeforeItAndKeepsEveryFlushedRow) {
  std::vector<StoredRun> stored;
  {
    ResultsFile file = ResultsFile::create(file_on_disk(), make_info());
    for (auto batch : {make_batch(0, 40, 3), make_batch(40, 24, 2)}) {
      file.append(batch);
      file.flush();
      stored.insert(stored.end(), batch.begin(), batch.end());
    }
    disk_->fill(0);
    std::vector<StoredRun> batch = make_batch(64, 64, 4);
    try {
      file.append(batch);
      FAIL() << "the append went through on a full disk";
    } catch (const StorageFullError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(file_on_disk().string()), std::string::npos) << message;
      EXPECT_NE(message.find("cannot reserve"), std::string::npos) << message;
      EXPECT_NE(message.find("No space left on device"), std::string::npos) << message;
    }
  }  // closed on a full disk, as a rank's destructors would

  {
    ResultsFile file = ResultsFile::open_read_only(file_on_disk());
    expect_rows_and_samples(file, stored);
  }
  // Once there is room again, the file takes appends: --resume goes on from it.
  disk_->empty();
  {
    ResultsFile resumed = ResultsFile::open_for_append(file_on_disk());
    std::vector<StoredRun> more = make_batch(64, 3, 1);
    resumed.append(more);
    resumed.finish("2026-11-30T15:00:00.000Z");
  }
  EXPECT_EQ(ResultsFile::open_read_only(file_on_disk()).run_count(), stored.size() + 3);
  // The blocks reserved past the end were given back when the file was closed.
  struct stat status {};
  ASSERT_EQ(::stat(file_on_disk().c_str(), &status), 0);
  EXPECT_LE(static_cast<std::uint64_t>(status.st_blocks) * 512, static_cast<std::uint64_t>(status.st_size) + (1 << 20));
}

TEST_F(FullDiskTest, AtCreationLeavesNoHalfMadeFile) {
  disk_->fill(1 << 20);  // room for a superblock, not for the space the first writes reserve
  EXPECT_THROW(ResultsFile::create(file_on_disk(), make_info()), StorageFullError);
  EXPECT_FALSE(fs::exists(file_on_disk())) << "a file made without its tables would stand in the way of the next run";
}

// Damaged copies of a sound file: a reader gets DamagedResultsFile (or another ResultsFileError when
// HDF5 itself refuses the file), never a crash or a hang of its own process.
TEST_F(StoreTest, ADamagedFileIsRefusedNeverReadIntoACrash) {
  write_file({make_batch(0, 200, 5), make_batch(200, 100, 3)});
  const std::string sound = [&] {
    std::ifstream in(file_path(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }();
  const fs::path copy = dir_ / "damaged.h5";
  const auto write_copy = [&](const std::string& bytes) {
    std::ofstream(copy, std::ios::binary | std::ios::trunc) << bytes;
  };

  write_copy(sound.substr(0, sound.size() / 2));
  EXPECT_THROW(ResultsFile::open_read_only(copy), ResultsFileError) << "a truncated file";
  try {
    ResultsFile::open_for_append(copy);
    ADD_FAILURE() << "a truncated file was opened to append";
  } catch (const DamagedResultsFile& error) {
    EXPECT_NE(std::string(error.what()).find("is damaged"), std::string::npos) << error.what();
  }

  // Bytes flipped all over the file, one copy each: every open ends, with the file or with an error.
  int refused = 0, read = 0;
  for (std::size_t at = 0; at < sound.size(); at += sound.size() / 97 + 1) {
    std::string bytes = sound;
    bytes[at] = static_cast<char>(bytes[at] ^ 0x5a);
    write_copy(bytes);
    try {
      ResultsFile file = ResultsFile::open_read_only(copy);
      file.read_runs();
      ++read;
    } catch (const ResultsFileError&) { ++refused; }
  }
  EXPECT_GT(refused, 0) << "no flipped byte was noticed: are the checks in place?";
  EXPECT_GT(read + refused, 90);
}

// A file found sound is marked so, with its size, time and inode, and not read again while they
// stay; any write changes its time, and it is read again. A file written moments ago is not marked.
TEST_F(StoreTest, AFileFoundSoundIsReadAgainOnlyOnceChanged) {
  const fs::path probe = dir_ / "probe";
  std::ofstream(probe) << "x";
  if (::setxattr(probe.c_str(), "user.kernelsweep.probe", "1", 1, 0) != 0)
    GTEST_SKIP() << "this filesystem keeps no user attributes: every open reads the file";
  const auto marked = [&](const char* way) {
    char mark[256];
    return ::getxattr(file_path().c_str(), way, mark, sizeof mark) > 0;
  };
  constexpr const char* kToRead = "user.kernelsweep.checked-to-read";
  constexpr const char* kToAppend = "user.kernelsweep.checked-to-append";

  // A writer that finished with every write done marks its file both ways.
  write_file({make_batch(0, 50, 3)});
  EXPECT_TRUE(marked(kToRead));
  EXPECT_TRUE(marked(kToAppend));
  EXPECT_EQ(ResultsFile::open_read_only(file_path()).run_count(), 50u);

  // A writer takes the marks off before its first write; one that stops without finishing (killed)
  // leaves none.
  {
    ResultsFile appending = ResultsFile::open_for_append(file_path());
    EXPECT_FALSE(marked(kToRead));
    EXPECT_FALSE(marked(kToAppend));
    std::vector<StoredRun> more = make_batch(50, 10, 4);
    appending.append(more);
    appending.flush();
  }
  EXPECT_FALSE(marked(kToRead));
  // Read at once, a file modified a moment ago is checked but not marked: a write within the same
  // second could keep its time.
  EXPECT_EQ(ResultsFile::open_read_only(file_path()).run_count(), 60u);
  EXPECT_FALSE(marked(kToRead)) << "modified a moment ago";

  // As if written a minute ago: the check reads it, and marks it.
  struct stat written {};
  ASSERT_EQ(::stat(file_path().c_str(), &written), 0);
  timespec a_minute_ago[2] = {written.st_atim, written.st_mtim};
  a_minute_ago[1].tv_sec -= 60;
  ASSERT_EQ(::utimensat(AT_FDCWD, file_path().c_str(), a_minute_ago, 0), 0);
  EXPECT_EQ(ResultsFile::open_read_only(file_path()).run_count(), 60u);
  EXPECT_TRUE(marked(kToRead));

  // The signature overwritten in place: the same size, a new time. The check reads it again, and
  // refuses it as damaged.
  {
    std::fstream file(file_path(), std::ios::binary | std::ios::in | std::ios::out);
    file.write("NOTHDF5!", 8);
  }
  try {
    ResultsFile::open_read_only(file_path());
    ADD_FAILURE() << "a changed file was opened";
  } catch (const DamagedResultsFile& error) {
    EXPECT_NE(std::string(error.what()).find("is damaged"), std::string::npos) << error.what();
  }
  // What the mark cannot see: bytes changed with the old time put back. The check is skipped, and
  // HDF5's own open refuses what is not its file.
  ASSERT_EQ(::utimensat(AT_FDCWD, file_path().c_str(), a_minute_ago, 0), 0);
  try {
    ResultsFile::open_read_only(file_path());
    ADD_FAILURE() << "a file without an HDF5 signature was opened";
  } catch (const DamagedResultsFile& error) {
    ADD_FAILURE() << "read again, though its mark matched: " << error.what();
  } catch (const ResultsFileError&) {}
}

TEST_F(StoreTest, AFileChangedRightAfterItsWriterMarkedItIsReadAgain) {
  const fs::path probe = dir_ / "probe";
  std::ofstream(probe) << "x";
  if (::setxattr(probe.c_str(), "user.kernelsweep.probe", "1", 1, 0) != 0)
    GTEST_SKIP() << "this filesystem keeps no user attributes: every open reads the file";
  // The writer waits out a tick of the filesystem's clock before it marks: a change made the moment
  // finish() returns has a later time than the mark holds.
  write_file({make_batch(0, 20, 3)});
  {
    std::fstream file(file_path(), std::ios::binary | std::ios::in | std::ios::out);
    file.write("NOTHDF5!", 8);
  }
  EXPECT_THROW(ResultsFile::open_read_only(file_path()), DamagedResultsFile);
}

TEST_F(StoreTest, DocumentsAreStoredOncePerDigest) {
  ResultsFile file = ResultsFile::create(file_path(), make_info());
  file.put_environment("sha256:a", "{\"gpu\":\"H200\"}");
  file.put_environment("sha256:a", "{\"gpu\":\"H200\"}");
  file.put_environment("sha256:b", "{\"gpu\":\"H100\"}");
  file.put_protocol("sha256:a", "{\"name\":\"do_bench\"}");
  file.put_protocol("sha256:a", "{\"name\":\"do_bench\"}");

  const std::vector<DigestedDocument> environments = file.read_environments();
  ASSERT_EQ(environments.size(), 2u);
  EXPECT_EQ(environments[0].digest, "sha256:a");
  EXPECT_EQ(environments[0].json, "{\"gpu\":\"H200\"}");
  EXPECT_EQ(environments[1].digest, "sha256:b");
  ASSERT_EQ(file.read_protocols().size(), 1u);
  EXPECT_EQ(file.read_protocols()[0].json, "{\"name\":\"do_bench\"}");
  EXPECT_THROW(file.put_protocol("", "{}"), ResultsFileError);
}

TEST_F(StoreTest, RefusesAnUnknownStatusNamingThePoint) {
  ResultsFile file = ResultsFile::create(file_path(), make_info());
  std::vector<StoredRun> batch = make_batch(0, 2, 0);
  batch[1].status = "ok";
  try {
    file.append(batch);
    FAIL() << "appended a row with status \"ok\"";
  } catch (const ResultsFileError& error) {
    EXPECT_NE(std::string(error.what()).find("point-1"), std::string::npos) << error.what();
  }
  EXPECT_EQ(file.run_count(), 0u);
}

TEST_F(StoreTest, ReadOnlyFileRefusesWrites) {
  write_file({make_batch(0, 1, 0)});
  ResultsFile file = ResultsFile::open_read_only(file_path());
  std::vector<StoredRun> batch = make_batch(1, 1, 0);
  EXPECT_THROW(file.append(batch), ResultsFileError);
  EXPECT_THROW(file.flush(), ResultsFileError);
  EXPECT_EQ(file.run_count(), 1u);
}

TEST_F(StoreTest, PassedPointsAndLatestStatusFollowReruns) {
  ResultsFile file = ResultsFile::create(file_path(), make_info());
  std::vector<StoredRun> first = make_batch(0, 3, 0);
  first[0].status = "crashed";
  first[1].status = "passed";
  first[2].status = "timeout";
  file.append(first);
  std::vector<StoredRun> rerun = {make_record(0, 2)};  // point-0 again, after a resume
  rerun[0].status = "passed";
  file.append(rerun);

  std::vector<PointStatus> points = file.point_statuses();
  ASSERT_EQ(points.size(), 3u);
  EXPECT_TRUE(std::is_sorted(points.begin(), points.end(), [](const PointStatus& a, const PointStatus& b) {
    return PointKeyLess()(a.key, b.key);
  })) << "sorted by key";
  std::sort(points.begin(), points.end(),
            [](const PointStatus& a, const PointStatus& b) { return a.first_row < b.first_row; });
  const std::vector<PointKey> keys{points[0].key, points[1].key, points[2].key};
  EXPECT_EQ(keys, (std::vector<PointKey>{point_key("point-0"), point_key("point-1"), point_key("point-2")}));
  EXPECT_EQ(points[0].first_row, 0u);
  EXPECT_EQ(points[0].status, "passed") << "the rerun's row is the latest";
  EXPECT_EQ(points[0].latest_row, 3u);
  EXPECT_TRUE(points[0].ever_passed);
  EXPECT_EQ(points[1].status, "passed");
  EXPECT_EQ(points[1].latest_row, 1u);
  EXPECT_EQ(points[2].status, "timeout");
  EXPECT_FALSE(points[2].ever_passed);
}

// /run_keys read with the HDF5 C API, as another tool would: each row's key bytes, its status's
// name in the enum and its repetition.
struct StoredKey {
  PointKey key{};
  std::string status;
  int repetition = 0;
};

std::vector<StoredKey> read_run_keys(const fs::path& path) {
  struct Raw {
    unsigned char key[32];
    unsigned char status;
    int repetition;
  };
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t dataset = H5Dopen2(file, "/run_keys", H5P_DEFAULT);
  const hid_t stored_type = H5Dget_type(dataset);
  const hid_t stored_status = H5Tget_member_type(stored_type, 1);
  const hid_t status_type = H5Tget_native_type(stored_status, H5T_DIR_ASCEND);
  const hsize_t key_bytes = 32;
  const hid_t key_type = H5Tarray_create2(H5T_NATIVE_UCHAR, 1, &key_bytes);
  const hid_t memory_type = H5Tcreate(H5T_COMPOUND, sizeof(Raw));
  H5Tinsert(memory_type, "point_key", offsetof(Raw, key), key_type);
  H5Tinsert(memory_type, "status", offsetof(Raw, status), status_type);
  H5Tinsert(memory_type, "repetition", offsetof(Raw, repetition), H5T_NATIVE_INT);
  const hid_t space = H5Dget_space(dataset);
  std::vector<Raw> raw(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  EXPECT_GE(H5Dread(dataset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), 0);
  std::vector<StoredKey> keys;
  for (const Raw& row : raw) {
    StoredKey& key = keys.emplace_back();
    std::copy(std::begin(row.key), std::end(row.key), key.key.begin());
    char name[16] = {};
    EXPECT_GE(H5Tenum_nameof(status_type, &row.status, name, sizeof name), 0);
    key.status = name;
    key.repetition = row.repetition;
  }
  for (hid_t type : {space, memory_type, key_type, status_type, stored_status, stored_type}) H5Idec_ref(type);
  H5Dclose(dataset);
  H5Fclose(file);
  return keys;
}

// Opens the file's /run_keys to change it as a damaged or cut file would have it.
template <class Change> void change_run_keys(const fs::path& path, Change&& change) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t dataset = H5Dopen2(file, "/run_keys", H5P_DEFAULT);
  change(dataset);
  H5Dclose(dataset);
  H5Fclose(file);
}

// The 32 bytes a 64-digit hex id spells, read here without the store's own parser.
PointKey bytes_of_hex(const std::string& hex) {
  PointKey key{};
  for (std::size_t i = 0; i < key.size(); ++i)
    key[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return key;
}

TEST_F(StoreTest, RunKeysSayOfEveryRowWhatRunsSays) {
  std::vector<StoredRun> batch = make_batch(0, 7, 2);
  const char* statuses[] = {"passed", "failed", "error", "crashed", "timeout", "skipped", "passed"};
  for (std::size_t i = 0; i < batch.size(); ++i) {
    batch[i].status = statuses[i];
    batch[i].repetition = static_cast<std::int32_t>(i % 3);
  }
  const std::string sha_id = "3915be95d613e5a8f9379c2730cb664065394bcff9c1ab4b3ea9e30a202b42a4";
  batch[1].point_id = sha_id;  // an id kernelsweep makes; the others are ids of another tool's rows
  write_file({batch});

  const std::vector<StoredKey> keys = read_run_keys(file_path());
  ASSERT_EQ(keys.size(), batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    EXPECT_EQ(keys[i].key, point_key(batch[i].point_id));
    EXPECT_EQ(keys[i].status, batch[i].status);
    EXPECT_EQ(keys[i].repetition, batch[i].repetition);
  }
  EXPECT_EQ(keys[1].key, bytes_of_hex(sha_id)) << "a SHA-256 id is stored as its own bytes";

  // What status and a resume read: each row's measurement key and status, in row order.
  const ResultsFile file = ResultsFile::open_read_only(file_path());
  std::vector<std::uint64_t> rows;
  file.scan_point_keys([&](std::uint64_t row, const PointKey& key, std::size_t status) {
    rows.push_back(row);
    EXPECT_EQ(key, repetition_key(point_key(batch[row].point_id), batch[row].repetition)) << "row " << row;
    EXPECT_EQ(std::string(kStatuses[status]), batch[row].status) << "row " << row;
  });
  EXPECT_EQ(rows, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6}));
}

// A writer stopped between a batch's rows and their keys leaves /run_keys short: readers read /runs
// instead, with the same answers, and the next writer completes /run_keys from /runs.
TEST_F(StoreTest, AShortRunKeysIsReadAroundAndCompletedByTheNextWriter) {
  const std::vector<StoredRun> appended = write_file({make_batch(0, 200, 5), make_batch(200, 100, 3)});
  const auto statuses_of = [](const ResultsFile& file) {
    std::vector<std::tuple<PointKey, std::string, std::uint64_t, std::uint64_t>> out;
    for (const PointStatus& point : file.point_statuses())
      out.emplace_back(point.key, std::string(point.status), point.first_row, point.latest_row);
    return out;
  };
  const auto whole = statuses_of(ResultsFile::open_read_only(file_path()));
  ASSERT_EQ(whole.size(), 300u);

  change_run_keys(file_path(), [](hid_t dataset) {
    const hsize_t rows = 120;
    ASSERT_GE(H5Dset_extent(dataset, &rows), 0);
  });
  ASSERT_EQ(read_run_keys(file_path()).size(), 120u);
  EXPECT_EQ(statuses_of(ResultsFile::open_read_only(file_path())), whole) << "read through /runs";

  {
    ResultsFile writer = ResultsFile::open_for_append(file_path());
    writer.flush();
    writer.finish("2026-11-30T14:00:00.000Z");
  }
  const std::vector<StoredKey> keys = read_run_keys(file_path());
  ASSERT_EQ(keys.size(), appended.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(keys[i].key, point_key(appended[i].point_id)) << "row " << i;
    EXPECT_EQ(keys[i].status, appended[i].status) << "row " << i;
  }
  EXPECT_EQ(statuses_of(ResultsFile::open_read_only(file_path())), whole);
}

// A /run_keys that says of a row something else than /runs makes the file damaged: status and a
// resume would trust it.
TEST_F(StoreTest, ARunKeyThatDisagreesWithItsRowIsDamage) {
  write_file({make_batch(0, 50, 5)});
  ASSERT_EQ(read_run_keys(file_path()).at(7).status, "passed");
  change_run_keys(file_path(), [](hid_t dataset) {
    // Row 7's status alone, written as "timeout".
    const hid_t stored_type = H5Dget_type(dataset);
    const hid_t stored_status = H5Tget_member_type(stored_type, 1);
    const hid_t status_type = H5Tget_native_type(stored_status, H5T_DIR_ASCEND);
    const hid_t memory_type = H5Tcreate(H5T_COMPOUND, 1);
    H5Tinsert(memory_type, "status", 0, status_type);
    unsigned char value = 0;
    ASSERT_GE(H5Tenum_valueof(status_type, "timeout", &value), 0);
    const hid_t file_space = H5Dget_space(dataset);
    const hsize_t start = 7, count = 1;
    H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &count, nullptr);
    const hid_t memory_space = H5Screate_simple(1, &count, nullptr);
    ASSERT_GE(H5Dwrite(dataset, memory_type, memory_space, file_space, H5P_DEFAULT, &value), 0);
    for (hid_t id : {memory_space, file_space, memory_type, status_type, stored_status, stored_type}) H5Idec_ref(id);
  });
  ASSERT_EQ(read_run_keys(file_path()).at(7).status, "timeout");
  try {
    ResultsFile::open_read_only(file_path());
    ADD_FAILURE() << "a /run_keys that disagrees with /runs was read";
  } catch (const DamagedResultsFile& error) {
    EXPECT_NE(std::string(error.what()).find("row 7 of /run_keys does not say what row 7 of /runs says"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(StoreTest, SummaryCountsPointsByLatestStatusAndListsMissingOnes) {
  {
    ResultsFile file = ResultsFile::create(file_path(), make_info());
    std::vector<StoredRun> batch = make_batch(0, 5, 0);  // point-4 failed, the others passed
    file.append(batch);
    file.flush();
  }  // closed without finish(): an interrupted run
  ResultsFile file = ResultsFile::open_read_only(file_path());
  std::vector<PointKey> planned;
  for (const char* id : {"point-0", "point-1", "point-2", "point-3", "point-4", "point-5", "point-6"})
    planned.push_back(point_key(id));
  PositionedKeys plan;
  for (const PointKey& key : planned) plan.emplace_back(key, plan.size());
  sort_by_key(plan);
  const ResultsSummary summary = summarise_results(file, file.point_statuses(), plan);
  EXPECT_EQ(summary.rows, 5u);
  EXPECT_EQ(summary.sessions, 1u);
  EXPECT_EQ(summary.info.ended_at, "");
  EXPECT_EQ(summary.points_by_status, (std::map<std::string, std::uint64_t>{{"failed", 1}, {"passed", 4}}));
  // The plan's ids are SHA-256s, which their keys give back; these test ids are not, and come back as
  // the hex of their keys.
  EXPECT_EQ(summary.missing_point_ids,
            (std::vector<std::string>{point_key_hex(point_key("point-5")), point_key_hex(point_key("point-6"))}));
  EXPECT_TRUE(summary.unplanned_point_ids.empty());
  // Points with rows that the plan lacks are named by the ids their rows hold.
  plan = {{planned[0], 0}, {planned[1], 1}};
  sort_by_key(plan);
  const ResultsSummary without_three = summarise_results(file, file.point_statuses(), plan);
  EXPECT_EQ(without_three.unplanned_point_ids, (std::vector<std::string>{"point-2", "point-3", "point-4"}));
  EXPECT_EQ(without_three.missing_point_ids, std::vector<std::string>{});
  EXPECT_EQ(summary.samples, file.sample_count());
}

TEST(SweepTextChange, SaysWhichLineChanged) {
  EXPECT_EQ(describe_sweep_text_change("a\nb\n", "a\nb\n"), "");
  const std::string change = describe_sweep_text_change("name: x\n  m: [1, 2]\n", "name: x\n  m: [1, 2, 4]\n");
  EXPECT_NE(change.find("line 2"), std::string::npos) << change;
  EXPECT_NE(change.find("`  m: [1, 2]`"), std::string::npos) << change;
  EXPECT_NE(change.find("`  m: [1, 2, 4]`"), std::string::npos) << change;
  const std::string appended_line = describe_sweep_text_change("a\n", "a\nb\n");
  EXPECT_NE(appended_line.find("line 2"), std::string::npos) << appended_line;
  EXPECT_NE(appended_line.find("`b`"), std::string::npos) << appended_line;
}

// The shape of a real sweep's stream: 20,000 rows arriving in batches of 64, each batch flushed.
// Checks every row and every sample span; prints the time per row (well under 0.1 ms on a 2-core machine).
TEST_F(StoreTest, TwentyThousandRowsInFlushedBatchesOf64) {
  constexpr int kRows = 20000, kBatch = 64;
  std::vector<StoredRun> appended;
  appended.reserve(kRows);
  double seconds = 0;
  {
    ResultsFile file = ResultsFile::create(file_path(), make_info());
    for (int first = 0; first < kRows; first += kBatch) {
      std::vector<StoredRun> batch = make_batch(first, std::min(kBatch, kRows - first), first);
      const auto start = std::chrono::steady_clock::now();
      file.append(batch);
      file.flush();
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (StoredRun& record : batch) appended.push_back(std::move(record));
    }
    file.finish("2026-11-30T15:00:00.000Z");
  }
  std::cout << "[ store ] append+flush: " << seconds / kRows * 1e6 << " us per row over " << kRows
            << " rows in batches of " << kBatch << "\n";
  ::testing::Test::RecordProperty("append_flush_us_per_row", std::to_string(seconds / kRows * 1e6));

  ResultsFile file = ResultsFile::open_read_only(file_path());
  const std::vector<StoredRun> rows = file.read_runs();
  ASSERT_EQ(rows.size(), appended.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].point_id, appended[i].point_id);
    ASSERT_EQ(rows[i].samples_offset, appended[i].samples_offset);
    ASSERT_EQ(rows[i].samples_count, appended[i].samples_count);
    ASSERT_EQ(rows[i].stats.median_ns, appended[i].stats.median_ns);
  }
  for (std::size_t i = 0; i < rows.size(); i += 997) {
    EXPECT_EQ(file.read_samples(rows[i].samples_offset, rows[i].samples_count), appended[i].samples_ns);
  }
  const std::vector<PointStatus> points = file.point_statuses();
  EXPECT_EQ(std::count_if(points.begin(), points.end(), [](const PointStatus& p) { return p.ever_passed; }),
            kRows - kRows / 5);
}

// The writer's metadata cache keeps every entry it makes (evictions are off): a flush that leaves it
// past its bound closes and reopens the file. Across those reopens every row, sample, document and
// rank stays as written once, and the cache stays bounded.
TEST_F(StoreTest, TheMetadataCacheStaysBoundedAndReopeningLosesNothing) {
  constexpr int kRows = 60000, kBatch = 500;
  std::size_t largest_cache = 0;
  std::vector<StoredRun> appended;
  {
    ResultsFile file = ResultsFile::create(file_path(), make_info());
    file.put_protocol("sha256:p", "{\"name\":\"do_bench\"}");
    file.put_rank({0, "node0", 0, "GPU-0", "0000:01:00.0", "H200"});
    for (int first = 0; first < kRows; first += kBatch) {
      std::vector<StoredRun> batch = make_batch(first, kBatch, first);
      // The long message makes each row's strings take room in the heaps, as real messages and
      // parameters do.
      for (StoredRun& run : batch) run.message = std::string(1000, 'm') + run.point_id;
      file.append(batch);
      file.flush();
      largest_cache = std::max(largest_cache, file.metadata_cache_bytes());
      // Stored keys are remembered across reopens: these puts add nothing.
      file.put_protocol("sha256:p", "{\"name\":\"do_bench\"}");
      file.put_rank({0, "node0", 0, "GPU-0", "0000:01:00.0", "H200"});
      for (StoredRun& record : batch) appended.push_back(std::move(record));
    }
    file.finish("2026-11-30T15:00:00.000Z");
  }
  EXPECT_LE(largest_cache, ResultsFile::kMetadataCacheBytes);
  ResultsFile file = ResultsFile::open_read_only(file_path());
  const std::vector<StoredRun> rows = file.read_runs();
  ASSERT_EQ(rows.size(), appended.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].point_id, appended[i].point_id);
    ASSERT_EQ(rows[i].message, appended[i].message);
    ASSERT_EQ(rows[i].samples_offset, appended[i].samples_offset);
  }
  for (std::size_t i = 0; i < rows.size(); i += 4999)
    EXPECT_EQ(file.read_samples(rows[i].samples_offset, rows[i].samples_count), appended[i].samples_ns);
  EXPECT_EQ(file.read_protocols().size(), 1u);
  EXPECT_EQ(file.read_ranks().size(), 1u);
  EXPECT_EQ(file.read_info().ended_at, "2026-11-30T15:00:00.000Z");
}

}  // namespace
}  // namespace ks
