// Python implementations in sweeps, under the real mpirun: torch implementations beside C++ ones in
// one results file, a kernel declared in Python (examples/python), and Python implementations that
// fail to import, raise, kill their interpreter, hang or fail their check, each costing only its
// points. Skipped where Debian's python3 cannot import torch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/digest.h"
#include "kernelindex/kernelindex.h"
#include "store/results_file.h"
#include "support/cli_runner.h"

namespace ks::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr const char* kPython = "/usr/bin/python3";

class PythonSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run_command(fmt::format("{} -c 'import torch' 2>/dev/null", kPython)).exit_code != 0)
      GTEST_SKIP() << kPython << " cannot import torch";
    ::setenv("KERNELSWEEP_PYTHON", kPython, 1);  // the python3 first on PATH may not see Debian's torch
  }
};

std::vector<Json> documents_in(const fs::path& folder) {
  std::vector<Json> out;
  for (const auto& entry : fs::directory_iterator(folder))
    if (entry.path().extension() == ".json") out.push_back(read_json(entry.path()));
  return out;
}

constexpr const char* kMixedSweep = R"(name: mixed_python
python:
  modules: [softmax]
  path: [{examples}]
protocol: {{warmup_ms: 1, rep_ms: 4, max_repeat: 50, flush_bytes: 0}}
kernels:
  - kernel: gemm
    implementations: [cpu, torch]
    grid: {{M: [16, 33], N: [8], K: [24], dtype: [fp32, bf16]}}
  - kernel: distill_cosine_loss
    implementations: [cpu, torch]
    modes: [forward, full]
    grid: {{tokens: [6], hidden: [8], vocab: [20], dtype: [fp32], bias: [false, true]}}
    fixed: {{chunk_size: 4, ignored_fraction: 0.25}}
  - kernel: softmax
    implementations: [torch, triton]
    grid: {{rows: [4, 32], cols: [16], dtype: [fp32, bf16]}}
  - kernel: test_sleep
    implementations: [cpu]
    modes: [forward]
    grid: {{id: [1, 2, 3]}}
)";

TEST_F(PythonSweep, PythonAndCppImplementationsShareOneFileOnFourRanks) {
  const fs::path dir = fresh_directory("python_mixed");
  const fs::path sweep = write_sweep(
      dir, fmt::format(kMixedSweep, fmt::arg("examples", fmt::format("{}/examples/python", KS_SOURCE_DIR))));
  const auto ids = planned_ids(sweep);
  ASSERT_EQ(ids.size(), 8u + 8u + 8u + 3u);

  const auto run = run_shell(mpirun_test_cli(4, fmt::format("run {} --output-dir {}", sweep.string(), dir.string())));
  ASSERT_EQ(run.exit_code, 0) << run.output;

  const ResultsFile file = ResultsFile::open_read_only(dir / "mixed_python.h5");
  std::map<std::string, int> seen;
  std::set<std::string> implementations_passed;
  for (const StoredRun& r : file.read_runs()) {
    ++seen[r.point_id];
    if (r.implementation == "triton") {
      EXPECT_EQ(r.status, "skipped") << r.message;  // a cuda implementation, and no GPU here
      continue;
    }
    EXPECT_EQ(r.status, "passed") << r.kernel << "/" << r.implementation << ": " << r.message;
    EXPECT_EQ(r.samples_count, static_cast<std::uint64_t>(r.n_repeat));
    implementations_passed.insert(r.kernel + "/" + r.implementation);
    if (r.kernel == "gemm") {
      const Json p = Json::parse(r.params_json);
      EXPECT_EQ(r.flops, 2.0 * p["M"].get<double>() * p["N"].get<double>() * p["K"].get<double>())
          << "the work of a C++ kernel counts for its Python implementations too";
    }
    if (r.kernel == "softmax") {
      const Json p = Json::parse(r.params_json);
      EXPECT_EQ(r.flops, 5.0 * p["rows"].get<double>() * p["cols"].get<double>()) << "the Python kernel's own work";
    }
  }
  for (const char* expected : {"gemm/cpu", "gemm/torch", "distill_cosine_loss/cpu", "distill_cosine_loss/torch",
                               "softmax/torch", "test_sleep/cpu"})
    EXPECT_TRUE(implementations_passed.count(expected)) << expected;
  EXPECT_EQ(seen.size(), ids.size());
  for (const auto& id : ids) EXPECT_EQ(seen[id], 1) << id;

  const auto documents = documents_in(dir / "kernelindex");
  EXPECT_EQ(documents.size(), ids.size());
  std::size_t python_documents = 0;
  for (const Json& d : documents) {
    EXPECT_TRUE(digest_mismatches(d).empty());
    const Json& spec = d.at("implementation").at("spec");
    if (!spec.contains("python")) continue;
    ++python_documents;
    const std::string module = spec["python"]["module"];
    EXPECT_TRUE(module == "softmax" || module.starts_with("kernelsweep.implementations.")) << module;
    if (module == "softmax") {
      EXPECT_EQ(spec["python"]["sha256"],
                sha256_hex(read_text(fs::path(KS_SOURCE_DIR) / "examples/python/softmax.py")));
    }
    EXPECT_EQ(spec.at("backend"), spec.at("implementation") == "triton" ? "cuda" : "cpu");
    EXPECT_FALSE(d.at("environment").at("spec").at("software").at("python").at("torch").get<std::string>().empty());
  }
  EXPECT_EQ(python_documents, 4u + 4u + 8u);  // gemm torch, distill_cosine_loss torch, softmax torch and triton
}

// Every implementation of distill_cosine_loss times the same operation in a mode: torch's forward
// makes the gradients, as the chunked implementations' does, and its backward nothing, so torch
// declares no counts of its own and the rank counts the kernel's, as for cpu.
TEST_F(PythonSweep, TorchDistillationCountsTheKernelsWorkInEachMode) {
  const fs::path dir = fresh_directory("python_distill_work");
  const std::string kernels = R"(  - kernel: distill_cosine_loss
    implementations: [cpu, torch]
    modes: [forward, backward, full, no-grad-forward]
    grid: {tokens: [6], hidden: [8], vocab: [20], dtype: [fp32]}
    fixed: {chunk_size: 4}
)";
  const fs::path sweep = write_sweep(dir, quick_sweep("distill_work", kernels, 20));
  const auto run = run_shell(mpirun_test_cli(1, fmt::format("run {} --output-dir {}", sweep.string(), dir.string())));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // BT 6, V 20, H 8 (the student's 4), fp32: the logits' products 2·6·20·(4 + 8), the gradients' 2·6·20·(4 + 4).
  const double logits = 2.0 * 6 * 20 * (4 + 8), products = 2.0 * 6 * 20 * (4 + 4);
  const double inputs = 4.0 * (6 * 4 + 20 * 4 + 6 * 8 + 20 * 8) + 8.0 * 6, gradients = 4.0 * (6 * 4 + 20 * 4);
  std::map<std::string, std::pair<double, double>> work;
  for (const StoredRun& r : ResultsFile::open_read_only(dir / "distill_work.h5").read_runs()) {
    EXPECT_EQ(r.status, "passed") << r.implementation << "/" << r.mode << ": " << r.message;
    work[r.implementation + "/" + r.mode] = {r.flops, r.bytes};
  }
  const std::map<std::string, std::pair<double, double>> kernel = {{"forward", {logits + products, inputs + gradients}},
                                                                   {"backward", {0.0, 0.0}},
                                                                   {"full", {logits + products, inputs + gradients}},
                                                                   {"no-grad-forward", {logits, inputs}}};
  for (const auto& [mode, counts] : kernel) {
    EXPECT_EQ(work.at("cpu/" + mode), counts) << mode;
    EXPECT_EQ(work.at("torch/" + mode), counts) << mode;
  }
}

// Liger's function computes the gradients in its forward even under torch.no_grad(): its
// no-grad-forward counts a forward's work, its other modes the kernel's (it needs a GPU to run, so
// its counts are read from the module directly).
TEST_F(PythonSweep, LigerCountsTheKernelsWorkAndAForwardsUnderNoGrad) {
  const auto out = run_command(fmt::format(
      "PYTHONPATH={}/python {} -c 'from kernelsweep.implementations import distill_cosine as d; "
      "p = dict(tokens=6, hidden=8, vocab=20, dtype=\"fp32\", bias=False, weight_hard_loss=0.5, weight_soft_loss=0.5, "
      "beta=0.5, temperature=1.0, ignore_index=-100, chunk_size=4, normalize=\"tokens\", ignored_fraction=0.0, "
      "seed=0); "
      "[print(m, d.liger_work(p, m).flops, d.liger_work(p, m).bytes) for m in (\"forward\", \"backward\", \"full\", "
      "\"no-grad-forward\")]'",
      KS_SOURCE_DIR, kPython));
  ASSERT_EQ(out.exit_code, 0) << out.err;
  // The kernel's forward and full: the four products 2·6·20·(4 + 8 + 4 + 4), inputs read, gradients written.
  const double flops = 2.0 * 6 * 20 * (4 + 8 + 4 + 4);
  const double bytes = 4.0 * (6 * 4 + 20 * 4 + 6 * 8 + 20 * 8) + 8.0 * 6 + 4.0 * (6 * 4 + 20 * 4);
  EXPECT_EQ(out.out, fmt::format("forward {0} {1}\nbackward 0.0 0.0\nfull {0} {1}\nno-grad-forward {0} {1}\n",
                                 fmt::format("{:.1f}", flops), fmt::format("{:.1f}", bytes)));
}

// A sweep file of tests/python/fragile_kernels.py's kernel (and any other), short points; `kernels`
// is the list under `kernels:`.
std::string fragile_sweep(const std::string& name, const std::string& kernels) {
  return fmt::format(
      "name: {}\npython: {{modules: [fragile_kernels], path: [{}/tests/python]}}\n"
      "protocol: {{warmup_ms: 1, rep_ms: 3, max_repeat: 20, flush_bytes: 0}}\nkernels:\n{}",
      name, KS_SOURCE_DIR, kernels);
}

TEST_F(PythonSweep, EachMisbehavingImplementationCostsOnlyItsPoints) {
  const fs::path dir = fresh_directory("python_fragile");
  const fs::path sweep = write_sweep(dir, fragile_sweep("fragile", R"(  - kernel: fragile
    timeout_s: 8
    implementations: [steady, missing_package, raises, dies, hangs, wrong]
    grid: {id: [0, 1]}
)"));
  const auto run = run_shell(mpirun_test_cli(2, fmt::format("run {} --output-dir {}", sweep.string(), dir.string())));
  EXPECT_EQ(run.exit_code, 1) << run.output;  // points did not pass, and nothing else went wrong

  std::map<std::string, std::vector<std::string>> outcomes;
  for (const RunRecord& r : ResultsFile::open_read_only(dir / "fragile.h5").read_runs())
    outcomes[r.implementation].push_back(r.status + ": " + r.message);
  const std::map<std::string, std::pair<std::string, std::string>> expected = {
      {"steady", {"passed", "steady id"}},
      {"missing_package", {"skipped", "kernelsweep_no_such_package is not importable"}},
      {"raises", {"error", "ValueError: fragile refuses id"}},
      {"dies", {"crashed", "SIGKILL"}},
      {"hangs", {"timeout", "timeout of 8 s"}},
      {"wrong", {"failed", "got 41, expected 42"}},
  };
  for (const auto& [implementation, want] : expected) {
    ASSERT_EQ(outcomes[implementation].size(), 2u) << implementation;
    for (const std::string& outcome : outcomes[implementation]) {
      EXPECT_TRUE(outcome.starts_with(want.first + ": ")) << implementation << ": " << outcome;
      EXPECT_NE(outcome.find(want.second), std::string::npos) << implementation << ": " << outcome;
    }
  }
}

// While a rank's Python worker measures, its C++ worker is not running: a second process holding a
// CUDA context on the GPU slows what the Python worker measures. The C++ worker starts again for the
// C++ points after the Python ones.
TEST_F(PythonSweep, NoCppWorkerRunsWhileThePythonWorkerMeasures) {
  const fs::path dir = fresh_directory("python_alone");
  const fs::path sweep = write_sweep(dir, fragile_sweep("alone", R"(  - kernel: test_sleep
    implementations: [cpu]
    modes: [forward]
    grid: {id: [1, 2]}
  - kernel: fragile
    implementations: [alone]
    grid: {id: [0, 1, 2]}
  - kernel: test_sleep
    implementations: [cpu]
    modes: [forward]
    grid: {id: [3, 4]}
)"));
  const auto run = run_shell(mpirun_test_cli(2, fmt::format("run {} --output-dir {}", sweep.string(), dir.string())));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  std::map<std::string, int> passed;
  for (const RunRecord& r : ResultsFile::open_read_only(dir / "alone.h5").read_runs()) {
    EXPECT_EQ(r.status, "passed") << r.kernel << "/" << r.implementation << ": " << r.message;
    if (r.status == "passed") ++passed[r.kernel];
  }
  EXPECT_EQ(passed["fragile"], 3);
  EXPECT_EQ(passed["test_sleep"], 4);
}

TEST_F(PythonSweep, AModuleThatCannotBeImportedIsTheSweepFilesErrorAtItsEntry) {
  const fs::path dir = fresh_directory("python_broken");
  const fs::path sweep = dir / "broken.yaml";
  write_file(sweep, fmt::format(R"(name: broken
python:
  path: [{}/tests/python]
  modules:
    - fragile_kernels
    - broken_kernels
kernels:
  - kernel: fragile
)",
                                KS_SOURCE_DIR));
  const auto validate = run_command(fmt::format("{} validate {}", KS_CLI, sweep.string()));
  EXPECT_EQ(validate.exit_code, 2);
  EXPECT_EQ(validate.err, sweep.string() +
                              ":6:7: python.modules[1]: Python module broken_kernels: RuntimeError: "
                              "broken_kernels cannot be set up on this machine\n");
}

TEST_F(PythonSweep, KernelsDeclaredInPythonAreListedValidatedAndPlanned) {
  const std::string examples = fmt::format("--python-module softmax --python-path {}/examples/python", KS_SOURCE_DIR);
  const auto kernels = run_command(fmt::format("{} kernels --json {}", KS_CLI, examples));
  ASSERT_EQ(kernels.exit_code, 0) << kernels.err;
  const Json listed = Json::parse(kernels.out);
  const auto softmax = std::find_if(listed.begin(), listed.end(), [](const Json& k) { return k["name"] == "softmax"; });
  ASSERT_NE(softmax, listed.end());
  EXPECT_EQ((*softmax)["origin"]["python_module"], "softmax");
  EXPECT_EQ((*softmax)["implementations"].size(), 2u);

  const fs::path dir = fresh_directory("python_validate");
  const fs::path sweep = dir / "bad.yaml";
  write_file(sweep, "name: bad\nkernels:\n  - kernel: softmax\n    grid:\n      cols: [64, 0]\n");
  const auto bad = run_command(fmt::format("{} validate {} {}", KS_CLI, sweep.string(), examples));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find(sweep.string() + ":5:"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("cols"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("below the minimum 1"), std::string::npos) << bad.err;

  const auto plan = run_command(fmt::format("{} plan {}/examples/python/softmax.yaml --json", KS_CLI, KS_SOURCE_DIR));
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_EQ(Json::parse(plan.out).size(), 16u);
}

}  // namespace
}  // namespace ks::testing
