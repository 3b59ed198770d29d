#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "env/environment.h"
#include "support/h200_node.h"

namespace {

using ks::testing::h200_gpu;

ks::HostInfo some_host(const std::string& hostname) {
  ks::HostInfo host = ks::testing::h200_node_host(hostname, "Open MPI v4.1.6");
  host.cpus_allowed = 14;
  return host;
}

TEST(Environment, HostInfoIsReadFromThisMachine) {
  const ks::HostInfo host = ks::read_host_info();
  EXPECT_FALSE(host.hostname.empty());
  EXPECT_FALSE(host.cpu_model.empty());
  EXPECT_FALSE(host.cpu_vendor.empty());
  EXPECT_GT(host.cpu_cores, 0);
  EXPECT_FALSE(host.architecture.empty());
  EXPECT_FALSE(host.os.empty()) << "no PRETTY_NAME read from /etc/os-release";
  EXPECT_TRUE(host.mpi_version.empty()) << "mpi_version is the caller's to fill";
}

// What the launcher allowed, not what the machine has: a process bound to one processor reads 1.
TEST(Environment, CpusAllowedAreTheProcessorsThisProcessMayRunOn) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  EXPECT_EQ(ks::read_host_info().cpus_allowed, CPU_COUNT(&allowed));
  int first = 0;
  while (!CPU_ISSET(first, &allowed)) ++first;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // bound to one processor, as mpirun binds a rank to a core
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    const bool bound = ::sched_setaffinity(0, sizeof one, &one) == 0;
    ::_exit(bound && ks::read_host_info().cpus_allowed == 1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a process bound to one processor did not read 1";
}

TEST(Environment, NoGpuGivesEmptyInfoWithoutCrashing) {
  const int count = ks::visible_gpu_count();
  EXPECT_GE(count, 0);
#ifndef KERNELSWEEP_HAVE_CUDA
  EXPECT_EQ(count, 0) << "a build without CUDA sees no GPU";
#endif
  // Ordinals outside [0, count) name no GPU, whatever the machine has.
  EXPECT_EQ(ks::read_gpu_info(count).index, -1);
  EXPECT_EQ(ks::read_gpu_info(-1).index, -1);
  if (count == 0) {
    const ks::GpuInfo gpu = ks::read_gpu_info(0);
    EXPECT_EQ(gpu.index, -1);
    EXPECT_TRUE(gpu.name.empty());
    EXPECT_TRUE(gpu.uuid.empty());
  }
}

TEST(Environment, GpuInfoOfAVisibleGpuIsComplete) {
  if (ks::visible_gpu_count() == 0) GTEST_SKIP() << "no GPU visible here";
  const ks::GpuInfo gpu = ks::read_gpu_info(0);
  EXPECT_EQ(gpu.index, 0);
  EXPECT_FALSE(gpu.name.empty());
  EXPECT_TRUE(
      std::regex_match(gpu.uuid, std::regex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")))
      << gpu.uuid;
  EXPECT_TRUE(std::regex_match(gpu.pci_bus_id, std::regex("[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-9a-f]")))
      << gpu.pci_bus_id;
  EXPECT_TRUE(std::regex_match(gpu.architecture, std::regex("sm_[0-9]{2,3}"))) << gpu.architecture;
  EXPECT_GT(gpu.memory_bytes, 0u);
  EXPECT_GT(gpu.multiprocessors, 0);
  EXPECT_FALSE(gpu.cuda_runtime_version.empty());
  EXPECT_FALSE(gpu.cublas_version.empty());
}

TEST(Environment, GpuSpecDescribesHardwareAndSoftware) {
  const ks::Json spec = ks::environment_spec(some_host("node-a"),
                                             h200_gpu(0, "GPU-11111111-2222-3333-4444-555555555555", "0000:18:00.0"));
  const ks::Json& hw = spec.at("hardware");
  EXPECT_EQ(hw.at("vendor"), "nvidia");
  EXPECT_EQ(hw.at("product"), "NVIDIA H200");
  EXPECT_EQ(hw.at("formFactor"), "SXM5-141GB");
  EXPECT_EQ(hw.at("architecture"), "sm_90");
  EXPECT_EQ(hw.at("memoryBytes"), 150109880320u);
  EXPECT_EQ(hw.at("multiprocessors"), 132);
  const ks::Json& sw = spec.at("software");
  EXPECT_EQ(sw.at("driver"), "580.159.04");
  EXPECT_EQ(sw.at("cudaDriver"), "13.0");
  EXPECT_EQ(sw.at("cudaRuntime"), "13.0");
  EXPECT_EQ(sw.at("cublas"), "13.1.0");
  EXPECT_EQ(sw.at("nccl"), "2.28.3");
  EXPECT_EQ(sw.at("mpi"), "Open MPI v4.1.6");
  EXPECT_EQ(sw.at("os"), "Ubuntu 24.04.3 LTS");
}

TEST(Environment, IdenticalMachinesShareOneSpec) {
  // Host name, GPU ordinal, UUID and PCI bus id change nothing a figure depends on.
  const ks::Json a = ks::environment_spec(some_host("node-a"),
                                          h200_gpu(0, "GPU-11111111-2222-3333-4444-555555555555", "0000:18:00.0"));
  const ks::Json b = ks::environment_spec(some_host("node-b"),
                                          h200_gpu(3, "GPU-66666666-7777-8888-9999-000000000000", "0000:9a:00.0"));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.dump().find("node-a"), std::string::npos);
  EXPECT_EQ(a.dump().find("GPU-1111"), std::string::npos);
}

TEST(Environment, CpuRankDescribesItsCpu) {
  const ks::HostInfo host = some_host("node-a");
  const ks::Json spec = ks::environment_spec(host, ks::GpuInfo{});
  EXPECT_EQ(spec.at("hardware").at("vendor"), "intel");
  EXPECT_EQ(spec.at("hardware").at("product"), host.cpu_model);
  EXPECT_EQ(spec.at("hardware").at("architecture"), "x86_64");
  EXPECT_EQ(spec.at("hardware").at("cores"), 112);
  EXPECT_EQ(spec.at("software").at("os"), host.os);
  EXPECT_EQ(spec.at("software").at("mpi"), host.mpi_version);
  EXPECT_FALSE(spec.at("software").contains("cudaRuntime"));
  EXPECT_EQ(spec.dump().find("node-a"), std::string::npos);
}

TEST(Environment, ThisMachineHasACpuSpec) {
  const ks::Json spec = ks::environment_spec(ks::read_host_info(), ks::read_gpu_info(ks::visible_gpu_count()));
  ASSERT_TRUE(spec.contains("hardware"));
  ASSERT_TRUE(spec.contains("software"));
  EXPECT_FALSE(spec["hardware"].value("product", "").empty());
  EXPECT_GT(spec["hardware"].value("cores", 0), 0);
}

TEST(Environment, InfoRoundTripsThroughJson) {
  const ks::GpuInfo gpu = h200_gpu(1, "GPU-11111111-2222-3333-4444-555555555555", "0000:18:00.0");
  const ks::GpuInfo gpu_back = ks::gpu_info_from_json(ks::to_json(gpu));
  EXPECT_EQ(ks::to_json(gpu_back), ks::to_json(gpu));
  EXPECT_EQ(gpu_back.index, 1);
  EXPECT_EQ(gpu_back.memory_bytes, gpu.memory_bytes);
  const ks::HostInfo host = some_host("node-a");
  const ks::HostInfo host_back = ks::host_info_from_json(ks::to_json(host));
  EXPECT_EQ(ks::to_json(host_back), ks::to_json(host));
  EXPECT_EQ(host_back.cpu_cores, 112);
  EXPECT_EQ(host_back.cpus_allowed, 14);
  EXPECT_EQ(ks::gpu_info_from_json(ks::Json::object()).index, -1);
}

TEST(Environment, GpuNamesSplitIntoProductAndFormFactor) {
  EXPECT_EQ(ks::gpu_product("NVIDIA A100-SXM4-80GB").product, "NVIDIA A100");
  EXPECT_EQ(ks::gpu_product("NVIDIA A100-SXM4-80GB").form_factor, "SXM4-80GB");
  EXPECT_EQ(ks::gpu_product("NVIDIA H100 80GB HBM3").product, "NVIDIA H100");
  EXPECT_EQ(ks::gpu_product("NVIDIA H100 80GB HBM3").form_factor, "SXM5-80GB");
  EXPECT_EQ(ks::gpu_product("NVIDIA RTX 6000 Ada Generation").product, "NVIDIA RTX 6000 Ada Generation");
  EXPECT_EQ(ks::gpu_product("NVIDIA RTX 6000 Ada Generation").form_factor, "");
}

TEST(Environment, DriverVersionIsReadFromEitherKernelModuleLine) {
  EXPECT_EQ(ks::nvidia_driver_version(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024"),
            "535.183.01");
  // The open kernel module's line, as an H200 host of ours prints it.
  EXPECT_EQ(ks::nvidia_driver_version(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  "),
            "580.159.04");
  EXPECT_EQ(ks::nvidia_driver_version("NVRM version: unknown"), "");
}

}  // namespace
