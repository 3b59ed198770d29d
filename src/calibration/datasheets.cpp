// The datasheet table. Tensor-core figures are the datasheets' dense ones (half of those "with
// sparsity"); fp64 is the FP64 Tensor Core figure, the rate cuBLAS's DGEMM runs at; fp32 is plain FP32
// (CUDA cores), tf32 the TF32 Tensor Core rate. The A100 has no fp8.
#include "calibration/datasheets.h"

#include <regex>
#include <vector>

namespace ks {
namespace {

struct Row {
  const char* pattern;  // matched against the driver's name
  Datasheet sheet;
};

DeviceRates rates(double memory_gbps, double fp64, double fp32, double tf32, double bf16, double fp16, double fp8) {
  DeviceRates r;
  r.memory_gbps = memory_gbps;
  r.tflops = {{"fp64", fp64}, {"fp32", fp32}, {"tf32", tf32}, {"bf16", bf16}, {"fp16", fp16}};
  if (fp8 > 0) r.tflops["fp8"] = fp8;
  return r;
}

const std::vector<Row>& table() {
  static const char* const kA100 = "NVIDIA A100 Tensor Core GPU datasheet (nvidia.com, 2021)";
  static const char* const kH100 = "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com, 2023)";
  static const char* const kH200 = "NVIDIA H200 Tensor Core GPU datasheet (nvidia.com, 2024)";
  static const std::vector<Row> rows = {
      {R"(A100-SXM4-40GB)", {"NVIDIA A100 SXM4 40GB", kA100, rates(1555, 19.5, 19.5, 156, 312, 312, 0)}},
      {R"(A100-SXM4-80GB)", {"NVIDIA A100 SXM4 80GB", kA100, rates(2039, 19.5, 19.5, 156, 312, 312, 0)}},
      {R"(A100-PCIE-40GB)", {"NVIDIA A100 PCIe 40GB", kA100, rates(1555, 19.5, 19.5, 156, 312, 312, 0)}},
      {R"(A100 80GB PCIe)", {"NVIDIA A100 PCIe 80GB", kA100, rates(1935, 19.5, 19.5, 156, 312, 312, 0)}},
      {R"(H100 (80GB HBM3|SXM))", {"NVIDIA H100 SXM5 80GB", kH100, rates(3350, 67, 67, 494.7, 989.4, 989.4, 1978.9)}},
      {R"(H100 PCIe)", {"NVIDIA H100 PCIe 80GB", kH100, rates(2000, 51, 51, 378, 756, 756, 1513)}},
      {R"(H200$)", {"NVIDIA H200 SXM 141GB", kH200, rates(4800, 67, 67, 494.7, 989.4, 989.4, 1978.9)}},
  };
  return rows;
}

}  // namespace

std::optional<Datasheet> datasheet_of(const std::string& name) {
  for (const Row& row : table())
    if (std::regex_search(name, std::regex(row.pattern))) return row.sheet;
  return std::nullopt;
}

}  // namespace ks
