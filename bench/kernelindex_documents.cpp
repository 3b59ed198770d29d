// How fast kernelindex documents are built and written: N runs of the distillation kernel on one
// H200 (the shape of a real sweep), each built into {run, protocol, environment, workload,
// implementation} and written as json (one file a run) and as jsonl shards, plain, gzip or zstd
// (a block every 64 runs, as rank 0 flushes). The protocol, environment and implementation documents
// are built once, as a rank builds them once per run; the workload and run documents and the workload
// digest are made for every run, as in a sweep. The run records (what the workers send) are made
// before the clock starts.
//
//   bench_kernelindex_documents [--count N] [--dir FOLDER] [--format json|jsonl|jsonl-gzip|jsonl-zstd]
//                                                            prints docs/s and the bytes written
//   bench_kernelindex_documents --example                    prints one object (docs/kernelindex.md)
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/digest.h"
#include "common/json_text.h"
#include "kernelindex/document_writer.h"
#include "kernelindex/kernelindex.h"
#include "measure/do_bench.h"
#include "measure/measurement.h"
#include "support/h200_node.h"

namespace {

using Clock = std::chrono::steady_clock;

ks::Json distill_params(std::int64_t tokens) {
  return {{"tokens", tokens},
          {"hidden", 4096},
          {"vocab", 128256},
          {"dtype", "bf16"},
          {"beta", 0.5},
          {"temperature", 1.0},
          {"weight_hard_loss", 0.5},
          {"weight_soft_loss", 0.5},
          {"chunk_size", 1024},
          {"ignore_index", -100},
          {"bias", false}};
}

ks::RunRecord distill_record(std::int64_t i, const ks::Json& params) {
  ks::RunRecord r = ks::testing::distill_run_record(params);
  r.mode = i % 2 ? "forward" : "full";
  r.rank = static_cast<std::int32_t>(i % 2);
  const int ms = static_cast<int>(i % 1000);
  r.started_at = fmt::format("2026-11-30T12:{:02}:{:02}.{:03}Z", (i / 60000) % 60, (i / 1000) % 60, ms);
  r.ended_at = fmt::format("2026-11-30T12:{:02}:{:02}.{:03}Z", (i / 60000) % 60, (i / 1000) % 60, ms);
  return r;
}

// The documents a rank cites in every run, cited once as the sweep does (ks::cite).
struct Fixed {
  ks::CitedDocument protocol, environment, implementation;
  std::string hardware;
};

Fixed fixed_documents() {
  Fixed f;
  const auto host = ks::testing::h200_node_host(
      "gpu-node-017", "Open MPI v4.1.6, package: Debian OpenMPI, ident: 4.1.6, repo rev: v4.1.6, Sep 30, 2023");
  const auto gpu = ks::testing::h200_gpu();
  f.protocol = ks::cite(ks::protocol_document(ks::testing::do_bench_gpu_protocol()));
  f.environment = ks::cite(ks::environment_document(host, gpu));
  f.implementation = ks::cite(
      ks::implementation_document("distill_cosine_loss", "fused", "cuda", ks::implementation_libraries("cuda", gpu)));
  f.hardware = ks::hardware_slug(host, gpu);
  return f;
}

// What a run's documents are made from: what rank 0 holds when a result arrives.
struct Input {
  ks::Json params;
  ks::RunRecord record;
};

std::vector<Input> inputs(std::int64_t count) {
  std::vector<Input> out;
  out.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    ks::Json params = distill_params(256 + 8 * (i / 2));
    ks::RunRecord record = distill_record(i, params);
    out.push_back({std::move(params), std::move(record)});
  }
  return out;
}

// One run's documents, built as the sweep builds them: the workload document and its digest and the
// BenchmarkRun; the documents a rank builds once are cited by reference.
struct Built {
  ks::Json run, workload;
};

Built build_run(const Fixed& fixed, Input& input) {
  Built built;
  built.workload = ks::workload_document("distill_cosine_loss", "Chunked distillation cosine loss", input.params);
  const ks::Citations cited{fixed.protocol.digest, fixed.environment.digest, ks::document_digest(built.workload),
                            fixed.implementation.digest};
  const ks::RunContext context{"Chunked distillation cosine loss", fixed.hardware, ks::workload_slug(input.params)};
  built.run = ks::benchmark_run_document(input.record, cited, context);
  return built;
}

void write_run(ks::DocumentWriter& writer, const Fixed& fixed, Input& input) {
  const Built built = build_run(fixed, input);
  writer.write(built.run, {fixed.protocol, fixed.environment, ks::json_text(built.workload), fixed.implementation});
}

struct Rate {
  double wall;               // documents per second of elapsed time
  double cpu;                // documents per second of this process's CPU time: what the figure would be on an
                             // idle machine (the build machine is shared, so elapsed time includes waiting)
  std::uintmax_t bytes = 0;  // in the folder, index included
};

constexpr int kRunsPerFlush = 64;  // rank 0 flushes documents with the results file every 64 results

std::uintmax_t bytes_in(const std::filesystem::path& dir) {
  std::uintmax_t bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file()) bytes += entry.file_size();
  return bytes;
}

// "jsonl-zstd" is jsonl compressed with zstd.
Rate documents_per_second(const std::filesystem::path& dir, const std::string& format, std::int64_t count) {
  std::filesystem::remove_all(dir);
  const Fixed fixed = fixed_documents();
  std::vector<Input> runs = inputs(count);
  const std::size_t dash = format.find('-');
  ks::ShardOptions shards;
  if (dash != std::string::npos) shards.compression = ks::compression_named(format.substr(dash + 1));
  const auto start = Clock::now();
  const std::clock_t cpu_start = std::clock();
  {
    ks::DocumentWriter writer(dir, format.substr(0, dash), shards);
    int since_flush = 0;
    for (Input& run : runs) {
      write_run(writer, fixed, run);
      if (++since_flush == kRunsPerFlush) {
        writer.flush();
        since_flush = 0;
      }
    }
    writer.flush();
  }
  const double cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::uintmax_t bytes = bytes_in(dir);
  std::filesystem::remove_all(dir);
  return {static_cast<double>(count) / seconds, static_cast<double>(count) / cpu_seconds, bytes};
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t count = 20000;
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "ks_bench_kernelindex";
  std::vector<std::string> formats{"jsonl", "jsonl-gzip", "jsonl-zstd", "json"};
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--example") {
      std::vector<Input> one = inputs(1);
      const Fixed fixed = fixed_documents();
      Built built = build_run(fixed, one[0]);
      const ks::CitedDocuments cited{fixed.protocol.document, fixed.environment.document, std::move(built.workload),
                                     fixed.implementation.document};
      std::puts(ks::kernelindex_object(std::move(built.run), cited).dump(2).c_str());
      return 0;
    }
    if (arg == "--count" && i + 1 < argc) count = std::stoll(argv[++i]);
    else if (arg == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (arg == "--format" && i + 1 < argc) formats = {argv[++i]};
    else {
      std::fprintf(stderr,
                   "usage: %s [--count N] [--dir FOLDER] [--format json|jsonl|jsonl-gzip|jsonl-zstd] | --example\n",
                   argv[0]);
      return 2;
    }
  }
  fmt::print("kernelindex documents: {} runs of distill_cosine on an H200 (built and written)\n", count);
  for (const std::string& format : formats) {
    const Rate rate = documents_per_second(dir / format, format, count);
    fmt::print(
        "  {:<10}  {:>7.0f} docs/s elapsed ({:.1f} us/doc)   {:>7.0f} docs/s of CPU time ({:.1f} us/doc)   "
        "{:.0f} bytes/doc on disk\n",
        format, rate.wall, 1e6 / rate.wall, rate.cpu, 1e6 / rate.cpu, static_cast<double>(rate.bytes) / count);
  }
  return 0;
}
