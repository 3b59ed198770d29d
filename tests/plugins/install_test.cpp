// The installed kernelsweep as a plugin's author meets it: `cmake --install` of this build into a
// fresh prefix, then examples/plugin (copied out of the source tree) configured and built against
// that prefix alone, the plugin it makes loaded and run, and its sweep file swept by the installed
// kernelsweep.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/digest.h"
#include "env/environment.h"
#include "kernels/kernel.h"
#include "plugins/plugins.h"
#include "store/results_file.h"
#include "support/cli_runner.h"

namespace {

namespace fs = std::filesystem;
using ks::testing::read_text;

// `cmake --install` of this build into `prefix`.
ks::testing::CommandResult install_this_build(const fs::path& prefix) {
  return ks::testing::run_shell(fmt::format("{} --install {} --prefix {}", KS_CMAKE, KS_BINARY_DIR, prefix.string()));
}

// The example copied out of the source tree and built against `prefix`: the path of libaxpy.so.
fs::path build_example(const fs::path& prefix, const fs::path& work, bool cuda) {
  const fs::path source = work / "axpy";
  const fs::path build = work / "build";
  fs::copy(fs::path(KS_SOURCE_DIR) / "examples" / "plugin", source, fs::copy_options::recursive);
  std::string configure =
      fmt::format("{} -S {} -B {} -G \"{}\" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH={} -DCMAKE_CXX_COMPILER={}",
                  KS_CMAKE, source.string(), build.string(), KS_CMAKE_GENERATOR, prefix.string(), KS_CXX_COMPILER);
  configure += cuda ? fmt::format(" -DCMAKE_CUDA_COMPILER={}", KS_CUDA_COMPILER) : " -DAXPY_CUDA=OFF";
  const auto configured = ks::testing::run_shell(configure);
  EXPECT_EQ(configured.exit_code, 0) << configure << "\n" << configured.output;

  // The package came from the prefix, and nothing in the build reads the source tree.
  const std::string cache = read_text(build / "CMakeCache.txt");
  EXPECT_NE(cache.find("kernelsweep_DIR:PATH=" + (prefix / "lib" / "cmake" / "kernelsweep").string()),
            std::string::npos);

  const auto built = ks::testing::run_shell(fmt::format("{} --build {} -j2", KS_CMAKE, build.string()));
  EXPECT_EQ(built.exit_code, 0) << built.output;
  const std::string rules = read_text(build / "build.ninja");
  for (const char* folder : {"/kernels", "/src", "/examples"})
    EXPECT_EQ(rules.find(std::string(KS_SOURCE_DIR) + folder), std::string::npos)
        << "the example's build refers to the source tree's " << folder;
  return build / "libaxpy.so";
}

ks::CheckResult run_cpu_axpy(const ks::KernelSpec& axpy, const std::string& dtype) {
  auto instance = axpy.instantiate("cpu", {{"n", 100003}, {"dtype", dtype}, {"alpha", -1.5}, {"seed", 7}});
  const ks::BoundMode bound = axpy.bind(*instance, "forward");
  for (int call = 0; call < 3; ++call) bound.run();
  return bound.check();
}

// The example's sweep file as a user runs it, its sizes cut to what a test affords: the plugin is
// named (axpy) and found through KERNELSWEEP_PLUGIN_PATH.
void sweep_example(const fs::path& prefix, const fs::path& library, const fs::path& work) {
  std::string sweep = read_text(fs::path(KS_SOURCE_DIR) / "examples" / "plugin" / "sweep.yaml");
  const std::string sizes = "{from: 1048576, to: 67108864, mul: 4}";
  ASSERT_NE(sweep.find(sizes), std::string::npos);
  sweep.replace(sweep.find(sizes), sizes.size(), "[1024, 100003]");
  fs::create_directories(work);
  ks::testing::write_file(work / "sweep.yaml", sweep);
  const std::string command =
      fmt::format("cd {} && KERNELSWEEP_PLUGIN_PATH={} {} -np 2 --oversubscribe {} run sweep.yaml --output-dir out",
                  work.string(), library.parent_path().string(), KS_MPIEXEC, (prefix / "bin" / "kernelsweep").string());
  const auto swept = ks::testing::run_shell(command);
  ASSERT_EQ(swept.exit_code, 0) << command << "\n" << swept.output;

  const ks::ResultsFile results = ks::ResultsFile::open_read_only(work / "out" / "axpy.h5");
  const auto rows = results.read_runs();
  EXPECT_EQ(rows.size(), 8u);
  const bool gpu = ks::visible_gpu_count() > 0;
  for (const auto& row : rows) {
    EXPECT_EQ(row.kernel, "axpy");
    const bool runs_here = row.implementation == "cpu" || gpu;
    EXPECT_EQ(row.status, runs_here ? "passed" : "skipped") << row.implementation << ": " << row.message;
  }

  // Every implementation document names the plugin, its version and its library's SHA-256.
  const std::string sha256 = ks::sha256_hex(read_text(library));
  int documents = 0;
  for (const auto& entry : fs::directory_iterator(work / "out" / "kernelindex")) {
    const auto object = nlohmann::json::parse(read_text(entry.path()));
    const auto& plugin = object.at("implementation").at("spec").at("plugin");
    EXPECT_EQ(plugin.at("name"), "axpy");
    EXPECT_EQ(plugin.at("version"), "0.1.0");
    EXPECT_EQ(plugin.at("sha256"), sha256);
    ++documents;
  }
  EXPECT_EQ(documents, 8);
}

TEST(InstalledPackage, BuildsLoadsAndSweepsTheExamplePlugin) {
  const fs::path work = ks::testing::fresh_directory("plugin-install");
  const fs::path prefix = work / "prefix";
  const auto installed = install_this_build(prefix);
  ASSERT_EQ(installed.exit_code, 0) << installed.output;
  for (const char* file :
       {"bin/kernelsweep", "include/kernelsweep/kernels/kernel.h", "include/kernelsweep/kernels/plugin.h",
        "include/kernelsweep/kernels/common/cuda.h", "include/kernelsweep/kernels/common/inputs.h",
        "lib/cmake/kernelsweep/kernelsweepConfig.cmake", "lib/cmake/kernelsweep/kernelsweepConfigVersion.cmake",
        "lib/cmake/kernelsweep/kernelsweep_plugin.cmake", "lib/cmake/kernelsweep/cuda_stubs.cmake",
        "lib/cmake/kernelsweep/plugin_entry.cpp.in"})
    EXPECT_TRUE(fs::exists(prefix / file)) << file;
  EXPECT_TRUE(fs::is_directory(prefix / "lib/kernelsweep/plugins"));
  EXPECT_NE(read_text(prefix / "lib/cmake/kernelsweep/kernelsweepConfig.cmake")
                .find(fmt::format("set(kernelsweep_KERNEL_API_VERSION {})", ks::kKernelApiVersion)),
            std::string::npos);
  const auto version = ks::testing::run_shell((prefix / "bin" / "kernelsweep").string() + " --version");
  EXPECT_EQ(version.exit_code, 0) << version.output;

  // The Python package comes along, and the installed kernelsweep's Python side imports it from the
  // prefix, not from the source tree: a module that says where kernelsweep came from is refused
  // unless it is under the prefix.
  EXPECT_TRUE(fs::exists(prefix / "lib/kernelsweep/python/kernelsweep/worker.py"));
  EXPECT_TRUE(fs::exists(prefix / "lib/kernelsweep/python/kernelsweep/implementations/distill_cosine.py"));
  fs::create_directories(work / "modules");
  ks::testing::write_file(work / "modules" / "installed_kernelsweep.py",
                          fmt::format("import kernelsweep\nassert kernelsweep.__file__.startswith('{}'), "
                                      "'kernelsweep from ' + kernelsweep.__file__\n",
                                      (prefix / "lib/kernelsweep/python").string()));
  const auto python = ks::testing::run_shell(fmt::format(
      "KERNELSWEEP_PYTHON=/usr/bin/python3 {} kernels --python-module installed_kernelsweep --python-path {}",
      (prefix / "bin" / "kernelsweep").string(), (work / "modules").string()));
  EXPECT_EQ(python.exit_code, 0) << python.output;

  // With CUDA where this build has it, so that the example's cuda.cu is compiled too.
  const bool cuda = std::string(KS_CUDA_COMPILER).size() > 0;
  fs::create_directories(work / "with-cuda");
  const fs::path library = build_example(prefix, work / "with-cuda", cuda);
  ASSERT_TRUE(fs::exists(library));

  ks::Registry registry;
  ks::register_builtin_kernels(registry);
  const ks::Origin origin = ks::load_plugin(library, registry);
  EXPECT_EQ(origin.plugin, "axpy");
  EXPECT_EQ(origin.version, "0.1.0");
  const ks::KernelSpec* axpy = registry.find("axpy");
  ASSERT_NE(axpy, nullptr);
  ASSERT_NE(axpy->implementation("cpu"), nullptr);
  ASSERT_NE(axpy->implementation("cuda"), nullptr);
  EXPECT_EQ(axpy->implementation("cuda")->backend, ks::Backend::cuda);
  for (const std::string dtype : {"fp32", "bf16"}) {
    const ks::CheckResult check = run_cpu_axpy(*axpy, dtype);
    EXPECT_TRUE(check.passed) << check.detail;
  }
  const ks::Work work_counts = axpy->work_of({{"n", 1000}, {"dtype", "bf16"}, {"alpha", 2.0}, {"seed", 0}}, "forward");
  EXPECT_EQ(work_counts.flops, 2000);
  EXPECT_EQ(work_counts.bytes, 6000);

  sweep_example(prefix, library, work / "sweep");
}

TEST(InstalledPackage, BuildsTheExamplePluginWithoutCuda) {
  const fs::path work = ks::testing::fresh_directory("plugin-install-no-cuda");
  const fs::path prefix = work / "prefix";
  const auto installed = install_this_build(prefix);
  ASSERT_EQ(installed.exit_code, 0) << installed.output;
  fs::create_directories(work / "without-cuda");
  const fs::path library = build_example(prefix, work / "without-cuda", false);
  ASSERT_TRUE(fs::exists(library));

  ks::Registry registry;
  ks::register_builtin_kernels(registry);
  ks::load_plugin(library, registry);
  const ks::KernelSpec* axpy = registry.find("axpy");
  ASSERT_NE(axpy, nullptr);
  const ks::CheckResult check = run_cpu_axpy(*axpy, "fp32");
  EXPECT_TRUE(check.passed) << check.detail;

  // The CUDA implementation stays known and says why it cannot run.
  ASSERT_NE(axpy->implementation("cuda"), nullptr);
  EXPECT_EQ(axpy->implementation("cuda")->backend, ks::Backend::cuda);
  try {
    axpy->instantiate("cuda", {{"n", 16}, {"dtype", "fp32"}, {"alpha", 2.0}, {"seed", 0}});
    ADD_FAILURE() << "the cuda implementation of a plugin built without CUDA made an instance";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()),
              "axpy cuda: the plugin axpy was built without CUDA: rebuild it where a CUDA compiler is found");
  }
}

}  // namespace
