// kernelsweep's Python implementations (python/kernelsweep/implementations) against the C++ side:
// the torch counter generator and the inputs it builds equal the C++ generators bit for bit, the torch
// implementations agree with the C++ references, liger without liger_kernel is skipped, and the
// Python checks fail on corrupted outputs. Each test runs Debian's python3 (which has torch) on a
// script written here; without torch there the whole file is skipped.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kernels/common/inputs.h"
#include "kernels/distill_cosine/distill_cosine.h"
#include "kernels/gemm/gemm.h"
#include "kernels/rms_norm/rms_norm.h"
#include "support/cli_runner.h"
#include "support/kernels.h"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr const char* kPython = "/usr/bin/python3";

// What every script starts with: its input (argv[1], JSON) as `args`, writers of raw little-endian
// float32 and int64 files, and what the checks' tests run a spoiled pass with.
constexpr const char* kPrelude = R"py(
import json, struct, sys
import torch

def write_floats(path, tensor):
    values = tensor.detach().to(torch.float32).cpu().reshape(-1).numpy().tobytes()
    with open(path, "wb") as out:
        out.write(values)

def write_int64(path, tensor):
    values = tensor.detach().to(torch.int64).cpu().reshape(-1).tolist()
    with open(path, "wb") as out:
        out.write(struct.pack(f"<{len(values)}q", *values))

def then(first, second):
    """A pass that runs `first`, then `second` (which spoils what first wrote)."""
    def run():
        first()
        second()
    return run

def check_with(instance, mode, method, run):
    """Whether mode's check passes with the instance's `method` replaced by `run` (put back after)."""
    bound = instance.bind(mode)
    real = getattr(instance, method)
    setattr(instance, method, run)
    passed = bound.check().passed
    setattr(instance, method, real)
    return passed

with open(sys.argv[1]) as f:
    args = json.load(f)
)py";

bool python_has_torch() {
  static const bool has = ks::testing::run_shell(fmt::format("{} -c 'import torch'", kPython)).exit_code == 0;
  return has;
}

class PythonImplementations : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!python_has_torch()) GTEST_SKIP() << kPython << " cannot import torch";
    dir_ = ks::testing::fresh_directory("python_implementations");
  }

  // Runs `script` (after the prelude) in the test's folder with `input` as its argv[1], and returns
  // its standard output; fails the test with its standard error when it exits non-zero.
  std::string run_python(const std::string& script, const Json& input) {
    ks::testing::write_file(dir_ / "input.json", input.dump());
    ks::testing::write_file(dir_ / "script.py", std::string(kPrelude) + script);
    const auto result = ks::testing::run_command(fmt::format(
        "cd '{}' && PYTHONPATH='{}/python' {} script.py input.json", dir_.string(), KS_SOURCE_DIR, kPython));
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out;
  }

  // The script's last line of output, as JSON.
  Json run_python_json(const std::string& script, const Json& input) {
    const std::string out = run_python(script, input);
    std::string last;
    std::stringstream lines(out);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty()) last = line;
    try {
      return Json::parse(last);
    } catch (const std::exception&) {
      ADD_FAILURE() << "not JSON: " << out;
      return Json::object();
    }
  }

  template <class T> std::vector<T> read_values(const std::string& name) {
    const std::string bytes = ks::testing::read_text(dir_ / name);
    std::vector<T> values(bytes.size() / sizeof(T));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
    return values;
  }

  bool exists(const std::string& name) const { return fs::exists(dir_ / name); }

  fs::path dir_;
};

// Bitwise equality of two float vectors (so -0 ≠ +0 and NaNs compare by their bits), with the first
// index where they differ.
::testing::AssertionResult same_bits(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "sizes differ: " << got.size() << " vs " << want.size();
  if (std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0) return ::testing::AssertionSuccess();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0)
      return ::testing::AssertionFailure() << "first difference at " << i << ": " << got[i] << " vs " << want[i];
  return ::testing::AssertionFailure();
}

// A kernel's parameters: its defaults with `overrides` applied, as the planner hands them over.
Json params_of(const std::string& kernel, const Json& overrides) {
  Json params = Json::object();
  for (const auto& parameter : ks::testing::builtin_kernel(kernel).parameters)
    params[parameter.name] = parameter.default_value;
  for (const auto& [key, value] : overrides.items()) params[key] = value;
  return params;
}

Json distill_params(const Json& overrides) {
  Json small = {{"tokens", 37}, {"hidden", 64}, {"vocab", 301}, {"chunk_size", 16}, {"seed", 11}};
  small.update(overrides);
  return params_of("distill_cosine_loss", small);
}

// Small distill points that vary what the inputs and the loss depend on.
std::vector<Json> distill_points() {
  // A fraction just above token 5's draw, which rounds to it in float32: make_targets compares the
  // draw with the fraction in double, and ignores that token; a float32 comparison would not.
  const double just_above_a_draw = ks::counter_uniform(123456789, ks::distill::kIgnored, 5) + std::ldexp(1.0, -40);
  return {
      distill_params({{"dtype", "fp32"}}),
      distill_params({{"dtype", "bf16"}, {"bias", true}, {"ignored_fraction", 0.3}, {"temperature", 2.0}}),
      distill_params({{"dtype", "fp32"},
                      {"bias", true},
                      {"ignored_fraction", just_above_a_draw},
                      {"ignore_index", -1},
                      {"normalize", "valid_tokens"},
                      {"beta", 0.25},
                      {"seed", 123456789}}),
      distill_params({{"dtype", "bf16"}, {"tokens", 8}, {"hidden", 2}, {"vocab", 3}, {"weight_hard_loss", 1.0}}),
  };
}

Json gemm_params(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& dtype, std::uint64_t seed) {
  return params_of("gemm", {{"M", m}, {"N", n}, {"K", k}, {"dtype", dtype}, {"seed", seed}});
}

std::vector<Json> gemm_points() {
  return {gemm_params(3, 5, 7, "fp32", 0), gemm_params(67, 45, 131, "bf16", 7), gemm_params(70, 80, 33, "fp32", 5),
          gemm_params(1, 1, 300, "bf16", 2)};
}

Json rms_norm_params(std::int64_t tokens, std::int64_t hidden, const std::string& dtype) {
  return params_of("rms_norm", {{"tokens", tokens}, {"hidden", hidden}, {"dtype", dtype}, {"seed", 5}});
}

// LlamaRMSNorm's points (llama, offset 0): one element, a row no multiple of 8, more rows than 64 dw chunks.
std::vector<Json> rms_norm_points() {
  return {rms_norm_params(70, 100, "bf16"), rms_norm_params(3, 1001, "fp32"), rms_norm_params(1, 1, "bf16"),
          rms_norm_params(130, 24, "fp32")};
}

std::vector<double> widen(const std::vector<float>& values) { return {values.begin(), values.end()}; }

// The largest |got − want| over the largest |want|: infinite where got has another size or a NaN.
double largest_difference(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return INFINITY;
  double difference = 0, magnitude = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    difference = std::isnan(d) ? INFINITY : std::max(difference, d);
    magnitude = std::max(magnitude, std::fabs(static_cast<double>(want[i])));
  }
  return difference / magnitude;
}

// ---- (a) the counter generator ----

TEST_F(PythonImplementations, CounterGeneratorEqualsTheCppOneBitForBit) {
  struct Case {
    std::uint64_t seed, tensor, first;
    std::int64_t count, skip;  // generated from `first`; compared from first + skip
  };
  const std::vector<Case> cases = {
      {0, 1, 0, 4096, 0},
      {11, 7, 0, 1000, 0},
      {18446744073709551615ull, 3, (1ull << 32) - 5, 300, 0},  // the largest seed; indices past 2^32
      {123456789, 8, (1ull << 40) + 3, 300, 0},
      {7, 2, 1ull << 62, 200, 0},
      // Past the generator's chunk of 2^25 values: the second chunk continues the first.
      {5, 4, 1000, (1ll << 25) + 3, (1ll << 25) - 100},
  };
  Json input = Json::array();
  for (const Case& c : cases)
    input.push_back({{"seed", c.seed}, {"tensor", c.tensor}, {"first", c.first}, {"count", c.count}, {"skip", c.skip}});
  run_python(R"py(
from kernelsweep.inputs import counter_uniform
for i, c in enumerate(args):
    values = counter_uniform(c["seed"], c["tensor"], c["count"], first=c["first"])
    write_floats(f"counter{i}.f32", values[c["skip"]:])
)py",
             input);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    std::vector<float> want;
    for (std::int64_t j = c.skip; j < c.count; ++j)
      want.push_back(ks::counter_uniform(c.seed, c.tensor, c.first + static_cast<std::uint64_t>(j)));
    EXPECT_TRUE(same_bits(read_values<float>(fmt::format("counter{}.f32", i)), want))
        << "seed " << c.seed << " tensor " << c.tensor << " first " << c.first;
  }
}

// ---- (b) the inputs the implementations build ----

TEST_F(PythonImplementations, DistillInputsEqualMakeInputsBitForBit) {
  const std::vector<Json> points = distill_points();
  run_python(R"py(
from kernelsweep.implementations import distill_cosine
for i, params in enumerate(args):
    inputs = distill_cosine.make_inputs(params, "cpu")
    for name in ("xs", "ws", "xt", "wt", "bs", "bt"):
        if inputs[name] is not None:
            write_floats(f"{i}_{name}.f32", inputs[name])
    write_int64(f"{i}_targets.i64", inputs["targets"])
)py",
             points);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ks::distill::Problem p{ks::Parameters(points[i])};
    const ks::distill::Inputs want = ks::distill::make_inputs(p);
    const std::vector<std::pair<const char*, const std::vector<float>*>> tensors = {
        {"xs", &want.xs}, {"ws", &want.ws}, {"xt", &want.xt}, {"wt", &want.wt}, {"bs", &want.bs}, {"bt", &want.bt}};
    for (const auto& [name, values] : tensors) {
      const std::string file = fmt::format("{}_{}.f32", i, name);
      ASSERT_EQ(exists(file), !values->empty()) << file;
      if (!values->empty()) {
        EXPECT_TRUE(same_bits(read_values<float>(file), *values)) << points[i].dump() << " " << name;
      }
    }
    EXPECT_EQ(read_values<std::int64_t>(fmt::format("{}_targets.i64", i)), want.targets) << points[i].dump();
  }
}

TEST_F(PythonImplementations, GemmInputsEqualMakeMatrixBitForBit) {
  const std::vector<Json> points = gemm_points();
  run_python(R"py(
from kernelsweep.implementations import gemm
for i, params in enumerate(args):
    inputs = gemm.make_inputs(params, "cpu")
    write_floats(f"{i}_a.f32", inputs["a"])
    write_floats(f"{i}_b.f32", inputs["b"])
)py",
             points);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ks::gemm::Shape s{ks::Parameters(points[i])};
    EXPECT_TRUE(same_bits(read_values<float>(fmt::format("{}_a.f32", i)), ks::gemm::make_matrix(s, ks::gemm::kA)))
        << points[i].dump();
    EXPECT_TRUE(same_bits(read_values<float>(fmt::format("{}_b.f32", i)), ks::gemm::make_matrix(s, ks::gemm::kB)))
        << points[i].dump();
  }
}

TEST_F(PythonImplementations, TorchRandInputsAreTheBenchmarksDraw) {
  // Drawn here as Liger's benchmark_distill_cosine_loss.py draws them (and gemm with two torch.rand),
  // after torch.manual_seed(seed); the counter draw differs from it.
  const Json input = {
      {"distill", distill_params({{"dtype", "bf16"}, {"bias", true}, {"inputs", "torch_rand"}, {"seed", 3}})},
      {"gemm", params_of("gemm", {{"M", 9}, {"N", 10}, {"K", 11}, {"inputs", "torch_rand"}, {"seed", 4}})}};
  const Json out = run_python_json(R"py(
from kernelsweep.implementations import distill_cosine, gemm
p = args["distill"]
dtype = torch.bfloat16
torch.manual_seed(p["seed"])
student = torch.nn.Linear(p["hidden"] // 2, p["vocab"], bias=True).to(dtype=dtype)
teacher = torch.nn.Linear(p["hidden"], p["vocab"], bias=True).to(dtype=dtype)
want = {"xs": torch.rand(p["tokens"], p["hidden"] // 2, dtype=dtype), "xt": torch.rand(p["tokens"], p["hidden"], dtype=dtype),
        "targets": torch.randint(0, p["vocab"], (p["tokens"],), dtype=torch.long),
        "ws": student.weight, "bs": student.bias, "wt": teacher.weight, "bt": teacher.bias}
got = distill_cosine.make_inputs(p, "cpu")
distill_same = all(torch.equal(got[name], want[name].detach()) for name in want)
counter = distill_cosine.make_inputs(dict(p, inputs="counter"), "cpu")
differs_from_counter = not torch.equal(got["xs"], counter["xs"])
g = args["gemm"]
torch.manual_seed(g["seed"])
a, b = torch.rand(g["M"], g["K"], dtype=dtype), torch.rand(g["K"], g["N"], dtype=dtype)
got = gemm.make_inputs(g, "cpu")
print(json.dumps({"distill": distill_same, "differs_from_counter": differs_from_counter,
                  "gemm": torch.equal(got["a"], a) and torch.equal(got["b"], b)}))
)py",
                                   input);
  EXPECT_EQ(out.value("distill", false), true) << out.dump();
  EXPECT_EQ(out.value("differs_from_counter", false), true) << out.dump();
  EXPECT_EQ(out.value("gemm", false), true) << out.dump();
}

// ---- (c) the torch implementations against the C++ references ----

TEST_F(PythonImplementations, TorchDistillAgreesWithTheCppReference) {
  const std::vector<Json> points = distill_points();
  const Json out = run_python_json(R"py(
from kernelsweep.implementations import distill_cosine
losses = []
for i, params in enumerate(args):
    instance = distill_cosine.make_torch(params, "cpu")
    instance.bind("full").run()
    write_floats(f"{i}_grad_xs.f32", instance.tensors.xs.grad)
    write_floats(f"{i}_grad_ws.f32", instance.tensors.ws.grad)
    if instance.tensors.bs is not None:
        write_floats(f"{i}_grad_bs.f32", instance.tensors.bs.grad)
    full_loss = float(instance.loss)
    instance.bind("no-grad-forward").run()
    losses.append({"full": full_loss, "no_grad": float(instance.loss)})
print(json.dumps(losses))
)py",
                                   points);
  ASSERT_EQ(out.size(), points.size()) << out.dump();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ks::distill::Problem p{ks::Parameters(points[i])};
    const ks::distill::Result want = ks::distill::reference(p, ks::distill::make_inputs(p));
    // fp32 agrees to rounding; bf16 logits and gradients are held in bf16, within the checks' tolerances.
    const double loss_tolerance = p.bf16 ? 2e-3 : 1e-5, gradient_tolerance = p.bf16 ? 2e-2 : 1e-4;
    for (const char* pass : {"full", "no_grad"}) {
      const double loss = out[i][pass].get<double>();
      EXPECT_LE(std::fabs(loss - want.loss) / std::fabs(want.loss), loss_tolerance)
          << points[i].dump() << " " << pass << ": " << loss << " vs " << want.loss;
    }
    EXPECT_LE(ks::distill::relative_error(widen(read_values<float>(fmt::format("{}_grad_xs.f32", i))), want.grad_xs),
              gradient_tolerance)
        << points[i].dump();
    EXPECT_LE(ks::distill::relative_error(widen(read_values<float>(fmt::format("{}_grad_ws.f32", i))), want.grad_ws),
              gradient_tolerance)
        << points[i].dump();
    if (p.bias) {
      EXPECT_LE(ks::distill::relative_error(widen(read_values<float>(fmt::format("{}_grad_bs.f32", i))), want.grad_bs),
                gradient_tolerance)
          << points[i].dump();
    }
  }
}

TEST_F(PythonImplementations, TorchDistillForwardMakesTheGradientsAndBackwardLeavesThem) {
  // torch times in each mode the operation the C++ implementations and Liger time: forward makes the
  // loss and the student's gradients, backward scales them by the incoming gradient, which is 1, so
  // it changes nothing (and scales them where it is not 1).
  const Json point = distill_params({{"dtype", "fp32"}, {"bias", true}, {"ignored_fraction", 0.3}});
  const Json out = run_python_json(R"py(
from kernelsweep.implementations import distill_cosine
instance = distill_cosine.make_torch(args, "cpu")
xs, ws, bs = instance.tensors.xs, instance.tensors.ws, instance.tensors.bs
instance.bind("forward").run()
first = {"xs": xs.grad, "ws": ws.grad, "bs": bs.grad}
for name, grad in first.items():
    if grad is not None:
        write_floats(f"forward_{name}.f32", grad)
first = {name: None if grad is None else grad.clone() for name, grad in first.items()}
loss = float(instance.loss)

# A second forward call: the input's gradient written afresh, the weights' accumulated.
instance.forward()
xs_afresh = torch.allclose(xs.grad, first["xs"], rtol=1e-6, atol=0)
weights_accumulate = torch.allclose(ws.grad, 2 * first["ws"], rtol=1e-6, atol=0) and \
    torch.allclose(bs.grad, 2 * first["bs"], rtol=1e-6, atol=0)

backward = instance.bind("backward")
held = [xs.grad, ws.grad, bs.grad]
before = [grad.clone() for grad in held]
loss_before = float(instance.loss)
for _ in range(3):
    backward.run()
backward_leaves_them = all(now is then and torch.equal(now, copy)
                           for now, then, copy in zip([xs.grad, ws.grad, bs.grad], held, before))
backward_leaves_loss = float(instance.loss) == loss_before
instance.grad_output = 0.5
backward.run()
scaled_when_not_one = all(torch.equal(now, copy * 0.5) for now, copy in zip([xs.grad, ws.grad, bs.grad], before))

fresh = distill_cosine.make_torch(args, "cpu")
fresh.bind("no-grad-forward").run()
no_grad_leaves_none = all(t.grad is None for t in (fresh.tensors.xs, fresh.tensors.ws, fresh.tensors.bs))
print(json.dumps({"loss": loss, "xs_afresh": xs_afresh, "weights_accumulate": weights_accumulate,
                  "backward_leaves_them": backward_leaves_them, "backward_leaves_loss": backward_leaves_loss,
                  "scaled_when_not_one": scaled_when_not_one, "no_grad_leaves_none": no_grad_leaves_none}))
)py",
                                   point);
  const ks::distill::Problem p{ks::Parameters(point)};
  const ks::distill::Result want = ks::distill::reference(p, ks::distill::make_inputs(p));
  EXPECT_LE(std::fabs(out.value("loss", 0.0) - want.loss) / std::fabs(want.loss), 1e-5) << out.dump();
  ASSERT_TRUE(exists("forward_xs.f32") && exists("forward_ws.f32") && exists("forward_bs.f32"))
      << "forward left a student gradient out";
  EXPECT_LE(ks::distill::relative_error(widen(read_values<float>("forward_xs.f32")), want.grad_xs), 1e-4);
  EXPECT_LE(ks::distill::relative_error(widen(read_values<float>("forward_ws.f32")), want.grad_ws), 1e-4);
  EXPECT_LE(ks::distill::relative_error(widen(read_values<float>("forward_bs.f32")), want.grad_bs), 1e-4);
  for (const char* expectation : {"xs_afresh", "weights_accumulate", "backward_leaves_them", "backward_leaves_loss",
                                  "scaled_when_not_one", "no_grad_leaves_none"})
    EXPECT_EQ(out.value(expectation, false), true) << expectation << ": " << out.dump();
}

TEST_F(PythonImplementations, TorchGemmAgreesWithTheCppProduct) {
  const std::vector<Json> points = gemm_points();
  run_python(R"py(
from kernelsweep.implementations import gemm
for i, params in enumerate(args):
    instance = gemm.make(params, "cpu")
    instance.bind("forward").run()
    write_floats(f"{i}_c.f32", instance.c)
)py",
             points);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ks::gemm::Shape s{ks::Parameters(points[i])};
    const auto a = ks::gemm::make_matrix(s, ks::gemm::kA), b = ks::gemm::make_matrix(s, ks::gemm::kB);
    std::vector<float> want(static_cast<std::size_t>(s.m * s.n));
    ks::gemm::multiply(a.data(), b.data(), want.data(), s.m, s.n, s.k);
    const std::vector<float> got = read_values<float>(fmt::format("{}_c.f32", i));
    ASSERT_EQ(got.size(), want.size()) << points[i].dump();
    // The checks' measure: the difference over Σ|a·b|, within gemm::tolerance.
    double worst = 0;
    for (std::int64_t row = 0; row < s.m; ++row)
      for (std::int64_t col = 0; col < s.n; ++col) {
        double scale = 0;
        for (std::int64_t j = 0; j < s.k; ++j)
          scale += std::fabs(static_cast<double>(a[static_cast<std::size_t>(row * s.k + j)]) *
                             b[static_cast<std::size_t>(j * s.n + col)]);
        const auto at = static_cast<std::size_t>(row * s.n + col);
        const double error = std::fabs(static_cast<double>(got[at]) - want[at]) / scale;
        worst = std::isnan(error) ? INFINITY : std::max(worst, error);
      }
    EXPECT_LE(worst, ks::gemm::tolerance(s)) << points[i].dump();
  }
}

TEST_F(PythonImplementations, TorchRmsNormPassesItsChecksAndAgreesWithTheCpuImplementation) {
  const std::vector<Json> points = rms_norm_points();
  const Json checks = run_python_json(R"py(
from kernelsweep.implementations import rms_norm
checks = {}
for i, params in enumerate(args):
    instance = rms_norm.make_torch(params, "cpu")
    for mode in ("forward", "backward", "full"):
        check = instance.bind(mode).check()
        checks[f"{i}/{mode}"] = {"passed": check.passed, "detail": check.detail}
    fresh = rms_norm.make_torch(params, "cpu")  # no weight gradient accumulated yet
    fresh.bind("full").run()
    outputs = {"y": fresh.y, "dx": fresh.x.grad, "dw": fresh.norm.weight.grad}
    for name, tensor in {**fresh.inputs, **outputs}.items():
        write_floats(f"{i}_{name}.f32", tensor)
print(json.dumps(checks))
)py",
                                      points);
  ASSERT_EQ(checks.size(), 3 * points.size()) << checks.dump();
  for (const auto& [point_and_mode, check] : checks.items())
    EXPECT_TRUE(check.value("passed", false)) << point_and_mode << ": " << check.dump();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ks::rms_norm::Problem p{ks::Parameters(points[i])};
    ks::rms_norm::Tensors cpu = ks::rms_norm::make_inputs(p);
    ks::rms_norm::run(p, cpu, "full");
    const auto file = [&](const char* name) { return read_values<float>(fmt::format("{}_{}.f32", i, name)); };
    using Named = std::vector<std::pair<const char*, const std::vector<float>*>>;
    for (const auto& [name, values] : Named{{"x", &cpu.x}, {"w", &cpu.w}, {"dy", &cpu.dy}})
      EXPECT_TRUE(same_bits(file(name), *values)) << name << " of " << points[i].dump();
    // Within the checks' tolerance of the CPU implementation, relative to each output's largest value.
    for (const auto& [name, values] : Named{{"y", &cpu.y}, {"dx", &cpu.dx}, {"dw", &cpu.dw}})
      EXPECT_LE(largest_difference(file(name), *values), p.bf16 ? 6.0 / 256 : 1e-4)
          << name << " of " << points[i].dump();
  }
}

// ---- (d) liger without liger_kernel ----

TEST_F(PythonImplementations, LigerWithoutLigerKernelIsSkippedAndImportingNeedsNeither) {
  const Json out = run_python_json(R"py(
import kernelsweep as ks
import kernelsweep.implementations
registered = {f"{k}/{i}": d.backend for (k, i), d in ks.registry.implementations.items()}
imported_liger = "liger_kernel" in sys.modules
# None in sys.modules makes "import liger_kernel" fail here even where it is installed.
sys.modules["liger_kernel"] = None
from kernelsweep.implementations import distill_cosine
try:
    distill_cosine.make_liger(args, "cpu")
    outcome = {"skipped": False}
except ks.Skip as skip:
    outcome = {"skipped": True, "message": str(skip)}
print(json.dumps({"registered": registered, "imported_liger": imported_liger, **outcome}))
)py",
                                   distill_params(Json::object()));
  const Json registered = out.value("registered", Json::object());
  const Json backends = {
      {"gemm/torch", "any"}, {"distill_cosine_loss/torch", "any"}, {"distill_cosine_loss/liger", "cuda"}};
  for (const auto& [name, backend] : backends.items())
    EXPECT_EQ(registered.value(name, Json()), backend) << name << " in " << registered.dump();
  EXPECT_EQ(out.value("imported_liger", true), false);
  EXPECT_EQ(out.value("skipped", false), true) << out.dump();
  EXPECT_EQ(out.value("message", "").rfind("liger_kernel is not importable: ", 0), 0u) << out.dump();
}

// ---- (e) the checks fail on corrupted outputs ----

TEST_F(PythonImplementations, GemmCheckFailsWhenTheRunWritesGarbage) {
  const Json out = run_python_json(
      R"py(
from kernelsweep.implementations import gemm
results = {}
for label, params in args.items():
    instance = gemm.make(params, "cpu")
    bound = instance.bind("forward")
    real_run = instance.run
    def product():
        return torch.matmul(instance.a, instance.b)
    def one_entry_off():
        # C[0,0], compared always, off by a tenth of Σ|a·b|: ten times bf16's tolerance.
        c = product()
        c[0, 0] += 0.1 * float((instance.a[0].double() * instance.b[:, 0].double()).abs().sum())
        instance.c = c
    runs = {"real": real_run, "constant": lambda: setattr(instance, "c", torch.full_like(product(), 123.0)),
            "nan": lambda: setattr(instance, "c", torch.full_like(product(), float("nan"))),
            "nothing": lambda: None, "one_entry_off": one_entry_off}
    for name, run in runs.items():
        instance.run = run
        check = bound.check()
        results[f"{label}/{name}"] = check.passed
print(json.dumps(results))
)py",
      Json{{"small_fp32", gemm_params(5, 6, 7, "fp32", 1)}, {"sampled_bf16", gemm_params(200, 300, 40, "bf16", 2)}});
  ASSERT_EQ(out.size(), 10u) << out.dump();
  for (const auto& [name, passed] : out.items())
    EXPECT_EQ(passed.get<bool>(), name.find("/real") != std::string::npos) << name;
}

TEST_F(PythonImplementations, DistillCheckFailsWhenThePassCorruptsALossOrAGradient) {
  // Each corruption runs the real pass, then spoils one output: the check must catch each one alone.
  const Json out =
      run_python_json(R"py(
from kernelsweep.implementations import distill_cosine
results = {}
for label, params in args.items():
    instance = distill_cosine.make_torch(params, "cpu")
    real = {name: getattr(instance, name) for name in ("forward", "backward", "full", "no_grad_forward")}
    t = instance.tensors
    def scale_loss():
        instance.loss = instance.loss.detach() * 1.01
    corruptions = {
        "full/real": ("full", real["full"]),
        "full/loss": ("full", then(real["full"], scale_loss)),
        "full/nan_loss": ("full", then(real["full"], lambda: setattr(instance, "loss", torch.tensor(float("nan"))))),
        "full/grad_xs": ("full", then(real["full"], lambda: t.xs.grad.mul_(1.05))),
        "full/grad_ws": ("full", then(real["full"], lambda: t.ws.grad[0].add_(1.0))),
        "full/grad_bs": ("full", then(real["full"], lambda: t.bs.grad.neg_())),
        "full/no_grad_xs": ("full", then(real["full"], lambda: setattr(t.xs, "grad", None))),
        "no-grad-forward/real": ("no_grad_forward", real["no_grad_forward"]),
        "no-grad-forward/loss": ("no_grad_forward", then(real["no_grad_forward"], scale_loss)),
        "forward/real": ("forward", real["forward"]),
        "forward/nothing": ("forward", lambda: None),
        "forward/grad_ws": ("forward", then(real["forward"], lambda: t.ws.grad[0].add_(1.0))),
        "forward/no_grad_xs": ("forward", then(real["forward"], lambda: setattr(t.xs, "grad", None))),
        "backward/real": ("backward", real["backward"]),
        # A backward that makes the gradients again, adding them to those forward left.
        "backward/gradients_again": ("backward", then(real["backward"], lambda: t.ws.grad.mul_(2.0))),
    }
    for name, (method, run) in corruptions.items():
        results[f"{label}/{name}"] = check_with(instance, name.split("/")[0], method, run)
    # Every mode's check passes on the real passes.
    for mode in ("forward", "backward", "full", "no-grad-forward"):
        bound = instance.bind(mode)
        bound.run()
        results[f"{label}/every_mode/{mode}/real"] = bound.check().passed
    # Above the size limit the check runs at a reduced shape, with the same loss function.
    big = distill_cosine.make_torch(dict(params, tokens=1024, hidden=1024, vocab=300), "cpu")
    reduced = big.bind("full").check()
    results[f"{label}/reduced/real"] = reduced.passed and "(reduced shape)" in reduced.detail
    real_loss = big.loss_function
    big.loss_function = lambda *a: real_loss(*a) * 1.01
    results[f"{label}/reduced/loss"] = big.bind("full").check().passed
print(json.dumps(results))
)py",
                      Json{{"fp32", distill_params({{"dtype", "fp32"}, {"bias", true}})},
                           {"bf16", distill_params({{"dtype", "bf16"}, {"bias", true}, {"ignored_fraction", 0.3}})}});
  ASSERT_EQ(out.size(), 2u * 21) << out.dump();
  for (const auto& [name, passed] : out.items())
    EXPECT_EQ(passed.get<bool>(), name.find("/real") != std::string::npos) << name;
}

TEST_F(PythonImplementations, RmsNormCheckFailsWhenThePassSpoilsAnOutput) {
  // A pass that writes nothing, or spoils one output after the real pass, fails the check of its mode.
  const Json out = run_python_json(R"py(
from kernelsweep.implementations import rms_norm
results = {}
for params in args:
    instance = rms_norm.make_torch(params, "cpu")
    real = {mode: getattr(instance, mode) for mode in ("forward", "backward", "full")}
    x, weight = instance.x, instance.norm.weight
    corruptions = {
        "forward/real": real["forward"],
        "forward/y_scaled": then(real["forward"], lambda: instance.y.data.mul_(1.05)),
        "forward/y_nan": then(real["forward"], lambda: instance.y.data[-1, -1].fill_(float("nan"))),
        "forward/nothing": lambda: None,
        "backward/real": real["backward"],
        "backward/dx_row": then(real["backward"], lambda: x.grad[-1].add_(0.25)),
        "backward/dw_negated": then(real["backward"], lambda: weight.grad.neg_()),
        "backward/no_dx": then(real["backward"], lambda: setattr(x, "grad", None)),
        "full/real": real["full"],
        "full/y_scaled": then(real["full"], lambda: instance.y.data.mul_(1.05)),
        "full/dw_negated": then(real["full"], lambda: weight.grad.neg_()),
    }
    for name, run in corruptions.items():
        mode = name.split("/")[0]
        results[f"{params['dtype']}/{name}"] = check_with(instance, mode, mode, run)
print(json.dumps(results))
)py",
                                   Json{rms_norm_params(70, 100, "bf16"), rms_norm_params(9, 64, "fp32")});
  ASSERT_EQ(out.size(), 2u * 11) << out.dump();
  for (const auto& [name, passed] : out.items())
    EXPECT_EQ(passed.get<bool>(), name.find("/real") != std::string::npos) << name;
}

TEST_F(PythonImplementations, RmsNormTorchSkipsWhatLlamaRmsNormCannotDoAndLigerNeedsLigerKernel) {
  const Json out = run_python_json(R"py(
import kernelsweep as ks
from kernelsweep.implementations import rms_norm
registered = {i: d.backend for (k, i), d in ks.registry.implementations.items() if k == "rms_norm"}
sys.modules["liger_kernel"] = None  # not importable, even where it is installed
outcomes = {}
for label, make, overrides in (("gemma", rms_norm.make_torch, {"casting_mode": "gemma"}),
                               ("none", rms_norm.make_torch, {"casting_mode": "none"}),
                               ("offset", rms_norm.make_torch, {"offset": 1.0}),
                               ("liger", rms_norm.make_liger, {})):
    try:
        make(dict(args, **overrides), "cpu")
        outcomes[label] = "made"
    except ks.Skip as skip:
        outcomes[label] = str(skip)
print(json.dumps({"registered": registered, **outcomes}))
)py",
                                   rms_norm_params(4, 8, "bf16"));
  EXPECT_EQ(out.value("registered", Json()), (Json{{"torch", "any"}, {"liger", "cuda"}})) << out.dump();
  EXPECT_NE(out.value("gemma", "").find("LlamaRMSNorm casts as casting_mode llama only"), std::string::npos)
      << out.dump();
  EXPECT_NE(out.value("none", "").find("casting_mode none needs cpu, cuda or liger"), std::string::npos) << out.dump();
  EXPECT_NE(out.value("offset", "").find("adds no offset to its weight; offset 1 "), std::string::npos) << out.dump();
  EXPECT_EQ(out.value("liger", "").rfind("liger_kernel is not importable: ", 0), 0u) << out.dump();
}

}  // namespace
