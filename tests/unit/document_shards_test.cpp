// jsonl document shards: blocks, shards closed at their size, compression, the index read back, and
// a folder opened again after a stop cut short what it was writing.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernelindex/document_index.h"
#include "kernelindex/document_reader.h"
#include "kernelindex/document_writer.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// A kernelindex object small enough to read in a failure message, of point p<i> and run run-<i>;
// a long message makes blocks and shards fill up after a few documents.
std::string object_line(int i) {
  return Json{
      {"run",
       {{"metadata", {{"name", fmt::format("run-{}", i)}}},
        {"spec",
         {{"sourceNative", {{"pointId", fmt::format("p{}", i % 7)}}}, {"message", std::string(200 + i, 'x')}}}}}}
      .dump();
}

std::vector<std::string> read_back(const fs::path& folder, const DocumentFilter& filter = {}) {
  std::vector<std::string> lines;
  for_each_document(folder, filter, [&](std::string_view line) { lines.emplace_back(line); });
  return lines;
}

std::vector<std::string> shard_names(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder))
    if (DocumentShardWriter::is_shard_name(entry.path().filename().string()))
      names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Writes documents first..last-1, a flush (a block) every `per_block`.
void write_documents(const fs::path& folder, ShardOptions options, int first, int last, int per_block) {
  DocumentWriter writer(folder, "jsonl", options);
  for (int i = first; i < last; ++i) {
    writer.write_line(object_line(i));
    if ((i - first + 1) % per_block == 0) writer.flush();
  }
  writer.flush();
}

std::vector<std::string> expected_lines(int first, int last) {
  std::vector<std::string> lines;
  for (int i = first; i < last; ++i) lines.push_back(object_line(i));
  return lines;
}

class DocumentShards : public ::testing::TestWithParam<const char*> {
 protected:
  Compression compression() const { return compression_named(GetParam()); }
};

TEST_P(DocumentShards, ReadBackInOrderThroughTheIndexAndAsAUserWould) {
  const fs::path folder = fresh_directory(std::string("shards-") + GetParam());
  // 100 documents in blocks of 10, shards closed past 3 bytes: a shard per block.
  write_documents(folder, {compression(), 3}, 0, 100, 10);
  EXPECT_EQ(read_back(folder), expected_lines(0, 100));
  const std::vector<std::string> shards = shard_names(folder);
  ASSERT_EQ(shards.size(), 10u);
  for (const std::string& name : shards) EXPECT_EQ(compression_of_file(name), compression()) << name;

  // The shards, concatenated in name order, are the documents as zcat, zstdcat or cat give them.
  const std::string reader = compression() == Compression::gzip   ? "zcat"
                             : compression() == Compression::zstd ? "zstdcat"
                                                                  : "cat";
  std::string command = reader;
  for (const std::string& name : shards) command += " " + (folder / name).string();
  const CommandResult cat = run_shell(command);
  ASSERT_EQ(cat.exit_code, 0) << cat.output;
  EXPECT_EQ(lines_of(cat.output), expected_lines(0, 100));

  // One point's documents, and one run's, are found through the index.
  std::vector<std::string> of_point;
  for (int i = 0; i < 100; ++i)
    if (i % 7 == 3) of_point.push_back(object_line(i));
  EXPECT_EQ(read_back(folder, {{"p3"}, {}}), of_point);
  EXPECT_EQ(read_back(folder, {{}, {"run-42"}}), std::vector<std::string>{object_line(42)});
  EXPECT_TRUE(read_back(folder, {{"p9"}, {}}).empty());

  // The command prints the same lines.
  const CommandResult printed =
      run_shell(fmt::format("{} documents {} --run run-42 --run run-7", KS_CLI, folder.string()));
  ASSERT_EQ(printed.exit_code, 0) << printed.output;
  EXPECT_EQ(lines_of(printed.output), (std::vector<std::string>{object_line(7), object_line(42)}));
}

TEST_P(DocumentShards, AReopenedFolderGoesOnFromWhatItsIndexNames) {
  const fs::path folder = fresh_directory(std::string("shards-reopen-") + GetParam());
  write_documents(folder, {compression(), 1 << 20}, 0, 20, 10);
  const fs::path shard = folder / DocumentShardWriter::shard_name(0, compression());
  const auto whole = fs::file_size(shard);
  // A stop left bytes of a block the index never named, and a shard it had begun.
  write_file(folder / "appended", "torn block bytes");
  run_shell(fmt::format("cat {0}/appended >> {1} && rm {0}/appended", folder.string(), shard.string()));
  write_file(folder / DocumentShardWriter::shard_name(1, compression()), "no entry names this");
  write_documents(folder, {compression(), 1 << 20}, 20, 30, 10);
  EXPECT_EQ(read_back(folder), expected_lines(0, 30));
  EXPECT_EQ(shard_names(folder), std::vector<std::string>{shard.filename().string()});
  EXPECT_GT(fs::file_size(shard), whole);
}

TEST_P(DocumentShards, ABlockWhoseEntriesAStopCutShortIsWrittenAgainWhole) {
  const fs::path folder = fresh_directory(std::string("shards-partial-") + GetParam());
  write_documents(folder, {compression(), 1 << 20}, 0, 20, 10);
  // The index names the first block and 4 of the second block's 10 documents, then half a line.
  const std::vector<std::string> index = lines_of(read_text(folder / kDocumentIndexFileName));
  ASSERT_EQ(index.size(), 21u) << "a comment and 20 entries";
  std::string cut;
  for (std::size_t i = 0; i < 15; ++i) cut += index[i] + "\n";
  write_file(folder / kDocumentIndexFileName, cut + index[15].substr(0, 9));
  {
    DocumentWriter reopened(folder, "jsonl", {compression(), 1 << 20});
    // What a resume asks before it writes the journal's documents again: none of the second block's.
    const std::vector<bool> held =
        reopened.holds({Json::parse(object_line(9))["run"], Json::parse(object_line(12))["run"]});
    EXPECT_EQ(held, (std::vector<bool>{true, false}));
  }
  write_documents(folder, {compression(), 1 << 20}, 10, 20, 10);
  EXPECT_EQ(read_back(folder), expected_lines(0, 20));
  // The shard holds each document once: the cut block is gone, not left unnamed.
  const std::string reader = compression() == Compression::gzip   ? "zcat"
                             : compression() == Compression::zstd ? "zstdcat"
                                                                  : "cat";
  const CommandResult cat =
      run_shell(reader + " " + (folder / DocumentShardWriter::shard_name(0, compression())).string());
  EXPECT_EQ(lines_of(cat.output), expected_lines(0, 20));
}

INSTANTIATE_TEST_SUITE_P(Compressions, DocumentShards, ::testing::Values("none", "gzip", "zstd"));

TEST(DocumentShardsIndex, AnIndexWhoseLastLineIsNotAnEntryStopsTheWriterAndRemovesNothing) {
  const fs::path folder = fresh_directory("shards-bad-index");
  write_documents(folder, {}, 0, 5, 5);
  write_file(folder / kDocumentIndexFileName, read_text(folder / kDocumentIndexFileName) + "not an entry\n");
  try {
    DocumentWriter(folder, "jsonl");
    FAIL() << "a writer opened a folder whose index it cannot read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(kDocumentIndexFileName), std::string::npos) << e.what();
  }
  EXPECT_EQ(shard_names(folder), std::vector<std::string>{"kernelindex-0000.jsonl"});
  EXPECT_THROW(read_back(folder), std::runtime_error);
}

TEST(DocumentShardsIndex, AShardItsIndexNamesThatIsGoneStopsTheWriterAndTheIndexStaysAsItWas) {
  const fs::path folder = fresh_directory("shards-gone");
  write_documents(folder, {}, 0, 10, 5);
  const std::string index = read_text(folder / kDocumentIndexFileName);
  fs::remove(folder / "kernelindex-0000.jsonl");
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      DocumentWriter(folder, "jsonl");
      FAIL() << "a writer opened a folder whose shard is gone";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("kernelindex-0000.jsonl"), std::string::npos) << e.what();
    }
    EXPECT_EQ(read_text(folder / kDocumentIndexFileName), index);
  }
}

TEST(DocumentShardsIndex, ANewCompressionStartsANewShard) {
  const fs::path folder = fresh_directory("shards-compression-change");
  write_documents(folder, {Compression::none, 1 << 20}, 0, 5, 5);
  write_documents(folder, {Compression::zstd, 1 << 20}, 5, 10, 5);
  EXPECT_EQ(shard_names(folder), (std::vector<std::string>{"kernelindex-0000.jsonl", "kernelindex-0001.jsonl.zst"}));
  EXPECT_EQ(read_back(folder), expected_lines(0, 10));
}

TEST(DocumentShardsIndex, EntriesRoundTripAndOtherLinesAreNone) {
  const IndexEntry entry{"abc123", "run-1", "kernelindex-0002.jsonl.zst", 4096, 812, 300, 97};
  const auto parsed = parse_index_line(index_line(entry));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(index_line(*parsed), index_line(entry));
  EXPECT_FALSE(parse_index_line("# comment"));
  EXPECT_FALSE(parse_index_line("a\tb\tc\t1\t2\t3"));
  EXPECT_FALSE(parse_index_line("a\tb\t../c\t1\t2\t3\t4"));
  EXPECT_FALSE(parse_index_line("a\tb\tc\t1\tx\t3\t4"));
}

TEST(DocumentShardsIndex, ARunNameThatWouldBreakItsIndexLineIsRefused) {
  const fs::path folder = fresh_directory("shards-tab");
  DocumentWriter writer(folder, "jsonl");
  const std::string tabbed = Json{{"run", {{"metadata", {{"name", "run\tone"}}}}}}.dump();
  EXPECT_THROW(writer.write_line(tabbed), std::invalid_argument);
  writer.write_line(object_line(1));
  writer.flush();
  EXPECT_EQ(read_back(folder), std::vector<std::string>{object_line(1)});
}

TEST(DocumentsFormat, AutoIsJsonForSmallSweepsAndJsonlAbove) {
  EXPECT_EQ(resolve_documents_format("auto", 10'000, 10'000), "json");
  EXPECT_EQ(resolve_documents_format("auto", 10'001, 10'000), "jsonl");
  EXPECT_EQ(resolve_documents_format("json", 5'000'000, 10'000), "json");
  EXPECT_EQ(resolve_documents_format("jsonl", 1, 10'000), "jsonl");
}

}  // namespace
}  // namespace ks::testing
