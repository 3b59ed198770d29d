// Rank 0's store on its own thread (run/storing_thread.h) writes what the store on the serving thread
// wrote: the same results file and the same documents, byte for byte but for the times of writing,
// and everything received when a run is interrupted. Documents made on the measuring ranks
// (kernelindex/run_documents.h) and sent with their records are stored as rank 0 made them.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "kernelindex/run_documents.h"
#include "run/outputs.h"
#include "support/cli_runner.h"
#include "support/kernels.h"
#include "support/measured_record.h"

namespace ks {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kRecords = 600;  // two full batches and part of a third

RunInfo run_info() {
  RunInfo info;
  info.sweep_name = "stored";
  info.sweep_path = "stored.yaml";
  info.sweep_text = "name: stored\n";
  info.plan_size = kRecords;
  info.kernelsweep_version = "test";
  info.started_at = "2026-12-03T10:00:00.000Z";
  info.host = "node-0";
  info.labels = {{"branch", "main"}, {"commit", "3f2a1c9"}};
  return info;
}

// The i-th record a rank sends: rms_norm's shapes, with samples, every tenth failed.
RunRecord record(std::size_t i) {
  RunRecord r = testing::cold_gpu_record();
  r.point_id = "p" + std::to_string(i);
  r.kernel = "rms_norm";
  r.implementation = "cpu";
  r.mode = "forward";
  r.params_json = R"({"hidden":64,"tokens":)" + std::to_string(i + 1) + "}";
  r.status = i % 10 == 9 ? "failed" : "passed";
  r.samples_ns.assign(i % 50, 1000.0 + static_cast<double>(i));
  r.rank = static_cast<int>(i % 2);
  return r;
}

std::vector<RankIdentity> ranks() {
  std::vector<RankIdentity> out(2);
  for (int rank = 0; rank < 2; ++rank) {
    out[rank].rank = rank;
    out[rank].host.hostname = "node-" + std::to_string(rank);
  }
  return out;
}

// A run's outputs in `folder`, the store on its own thread or (synchronous) on the serving thread.
struct Outputs {
  fs::path folder;
  bool synchronous;
  RunOutputs outputs;

  Outputs(const fs::path& folder, const std::string& format, bool synchronous)
      : folder(folder),
        synchronous(choose_store(synchronous)),
        outputs(testing::builtin_registry(), ResultsFile::create(folder / "stored.h5", run_info()),
                WriterLock::acquire(folder / "stored.h5", "node-0", "test"),
                DocumentWriter(folder / "kernelindex", format), ProtocolSpec{}, kRecords, 3600.0) {
    ::unsetenv("KERNELSWEEP_STORE_ON_SERVING_THREAD");
    outputs.on_start(ranks());
  }

  // The store's thread is chosen when the outputs are made (StoringThread::synchronous_by_default).
  static bool choose_store(bool synchronous) {
    if (synchronous) ::setenv("KERNELSWEEP_STORE_ON_SERVING_THREAD", "1", 1);
    else ::unsetenv("KERNELSWEEP_STORE_ON_SERVING_THREAD");
    return synchronous;
  }

  // `made_on_ranks`: each record comes with its documents, made as its rank makes them (its own
  // identity, the run's labels as rank 0 shares them); else rank 0 makes them.
  void receive(std::size_t count, bool made_on_ranks = false) {
    const nlohmann::json protocol = {{"name", "do_bench"}, {"warmup_ms", 25}};
    std::vector<RunDocuments> on_ranks;
    for (std::size_t rank = 0; rank < 2; ++rank)
      on_ranks.emplace_back(testing::builtin_registry(), ProtocolSpec{}, *outputs.labels_of_rank_documents());
    for (std::size_t i = 0; i < count; ++i) {
      RunRecord r = record(i);
      std::optional<RecordDocuments> documents;
      if (made_on_ranks) documents = on_ranks[r.rank].make(r, ranks()[r.rank], protocol, nullptr).documents;
      outputs.on_record(std::move(r), protocol, nullptr, std::move(documents));
      if (i % 100 == 0) outputs.on_tick();
    }
  }
};

std::string text_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Every file of the documents folder, by name, with its bytes.
std::map<std::string, std::string> documents_of(const fs::path& folder) {
  std::map<std::string, std::string> out;
  for (const auto& entry : fs::directory_iterator(folder / "kernelindex"))
    out[entry.path().filename().string()] = text_of(entry.path());
  return out;
}

// The results file as h5dump prints it (from the folder, so that the two name it alike), its times of
// writing (ISO 8601) blanked, and with them the root's strings_check, which covers its ended_at.
std::string dump_of(const fs::path& folder) {
  const auto result = testing::run_shell("cd " + folder.string() + " && h5dump stored.h5");
  EXPECT_EQ(result.exit_code, 0);
  static const std::regex times(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z)");
  static const std::regex root_check(R"((ATTRIBUTE "strings_check" \{[^(]*\(0\): )-?\d+)");
  return std::regex_replace(std::regex_replace(result.output, times, "TIME"), root_check, "$1CHECK");
}

TEST(StoringThread, WritesTheFilesTheServingThreadWrote) {
  for (const std::string format : {"json", "jsonl"}) {
    const fs::path root = testing::fresh_directory("storing-thread-" + format);
    fs::create_directories(root / "serving");
    fs::create_directories(root / "thread");
    Outputs on_serving(root / "serving", format, true), on_thread(root / "thread", format, false);
    on_serving.receive(kRecords);
    on_thread.receive(kRecords);
    EXPECT_EQ(on_serving.outputs.finish(), kRecords / 10);
    EXPECT_EQ(on_thread.outputs.finish(), kRecords / 10);
    const auto serving_documents = documents_of(on_serving.folder);
    EXPECT_EQ(serving_documents.size(), format == "json" ? kRecords : 2u);  // jsonl: a shard and its index
    EXPECT_TRUE(serving_documents == documents_of(on_thread.folder)) << format;
    EXPECT_TRUE(dump_of(on_serving.folder) == dump_of(on_thread.folder)) << format;
  }
}

TEST(RankDocuments, AreStoredAsRankZeroMadeThem) {
  for (const std::string format : {"json", "jsonl"}) {
    const fs::path root = testing::fresh_directory("rank-documents-" + format);
    fs::create_directories(root / "rank0");
    fs::create_directories(root / "ranks");
    Outputs on_rank0(root / "rank0", format, false), on_ranks(root / "ranks", format, false);
    on_rank0.receive(kRecords);
    on_ranks.receive(kRecords, true);
    EXPECT_EQ(on_rank0.outputs.finish(), kRecords / 10);
    EXPECT_EQ(on_ranks.outputs.finish(), kRecords / 10);
    EXPECT_EQ(on_rank0.outputs.stage_times().documents_made, kRecords);
    // Only the first record's: rank 0 holds none of the protocols and implementations it cites yet.
    EXPECT_EQ(on_ranks.outputs.stage_times().documents_made, 1u);
    EXPECT_TRUE(documents_of(on_rank0.folder) == documents_of(on_ranks.folder)) << format;
    EXPECT_TRUE(dump_of(on_rank0.folder) == dump_of(on_ranks.folder)) << format;
  }
}

// A rank whose environment rank 0 describes otherwise (its identity as rank 0 got it differs) cites a
// document rank 0 does not write: rank 0 makes that record's documents itself.
TEST(RankDocuments, ThoseCitingDocumentsRankZeroDoesNotHoldAreMadeAgain) {
  const fs::path root = testing::fresh_directory("rank-documents-unknown");
  fs::create_directories(root / "rank0");
  fs::create_directories(root / "ranks");
  Outputs on_rank0(root / "rank0", "jsonl", false), on_ranks(root / "ranks", "jsonl", false);
  const nlohmann::json protocol = {{"name", "do_bench"}, {"warmup_ms", 25}};
  RankIdentity elsewhere = ranks()[1];
  elsewhere.host.hostname = "node-9";
  elsewhere.host.cpu_model = "another CPU";
  RunDocuments on_rank(testing::builtin_registry(), ProtocolSpec{}, *on_ranks.outputs.labels_of_rank_documents());
  for (std::size_t i = 1; i < 20; i += 2) {
    on_rank0.outputs.on_record(record(i), protocol, nullptr, std::nullopt);
    on_ranks.outputs.on_record(record(i), protocol, nullptr,
                               on_rank.make(record(i), elsewhere, protocol, nullptr).documents);
  }
  on_rank0.outputs.finish();
  on_ranks.outputs.finish();
  EXPECT_EQ(on_ranks.outputs.stage_times().documents_made, 10u);
  EXPECT_TRUE(documents_of(on_rank0.folder) == documents_of(on_ranks.folder));
}

TEST(StoringThread, AnInterruptedRunStoresEveryRecordReceived) {
  const fs::path root = testing::fresh_directory("storing-thread-interrupted");
  Outputs outputs(root, "jsonl", false);
  outputs.receive(300);
  outputs.outputs.save_interrupted();
  EXPECT_EQ(outputs.outputs.unstored(), 0u);
  EXPECT_EQ(outputs.outputs.rows_in_file(), 300u);
  const std::string index = text_of(root / "kernelindex" / "kernelindex.index");
  EXPECT_EQ(std::count(index.begin(), index.end(), '\n'), 301);  // its header, then a line a document
  EXPECT_FALSE(fs::exists(root / "kernelindex" / PendingDocuments::kFileName));
}

TEST(StoringThread, AFailedTaskComesOutOfTheNextCheck) {
  StoringThread thread(false);
  int ran = 0;
  thread.give([] { throw std::runtime_error("disk full"); });
  thread.give([&] { ++ran; });
  EXPECT_THROW(thread.drain(), std::runtime_error);
  EXPECT_THROW(thread.check(), std::runtime_error);
  thread.give([&] { ++ran; });
  thread.wait();
  EXPECT_EQ(ran, 0);  // nothing after the failure is run
}

}  // namespace
}  // namespace ks
