"""rms_norm's Python implementations, the two providers of Liger-Kernel's
benchmark/scripts/benchmark_rms_norm.py:

- `torch`: the benchmark's LlamaRMSNorm (its `huggingface` provider) in plain torch ops: x cast to
  float32, rstd = rsqrt(mean(x²) + eps), x·rstd cast back to the dtype, times the weight. That is
  casting_mode llama with offset 0; it has no other casting and no offset, so other points are skipped.
- `liger`: Liger-Kernel's LigerRMSNorm module with the point's eps, offset and casting_mode, called as
  the benchmark calls it.

Both see the C++ implementations' inputs bit for bit (rms_norm.h Problem::input): x, w and dy from the
counter-based generator, rounded to the dtype. The weight is w, in the dtype of x (the benchmark's
is float32 ones: kernels/rms_norm/README.md says why it differs). The modes are the benchmark's, as
torch autograd runs them: forward; backward, y.backward(dy, retain_graph=True) through a forward
recorded once at bind; full, both. Each backward pass starts with x.grad None (the benchmark's
grad_to_none=[x]); the weight's gradient accumulates, as there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Optional

import torch

from .. import api as ks
from ..inputs import counter_symmetric

KERNEL = "rms_norm"

# Tensor ids of the counter-based inputs (rms_norm.h `Tensor`).
TENSOR_X, TENSOR_W, TENSOR_DY = 1, 2, 3
# Doubles of one kind the check holds at once (rows of x × hidden).
CHECK_BLOCK_VALUES = 1 << 22


@dataclass(frozen=True)
class Problem:
    """A point's parameters, as rms_norm::Problem reads them."""
    tokens: int
    hidden: int
    bf16: bool
    eps: float
    offset: float
    casting_mode: str  # "llama", "gemma" or "none"
    seed: int

    @staticmethod
    def of(params: dict) -> "Problem":
        return Problem(int(params["tokens"]), int(params["hidden"]), params["dtype"] == "bf16", float(params["eps"]),
                       float(params["offset"]), params["casting_mode"], int(params["seed"]))

    def describe(self) -> str:
        return f"{self.tokens}x{self.hidden} {'bf16' if self.bf16 else 'fp32'} {self.casting_mode}"

    def tolerance(self) -> float:
        # rms_norm.cpp tolerance(): up to 5.5 bf16 roundings (2^-8 each) of an output's scale; fp32
        # results carry their fp32 sums' rounding.
        return 6.0 / 256 if self.bf16 else 1e-4


def make_inputs(problem: Problem, device: str) -> Dict[str, torch.Tensor]:
    """x and dy (tokens × hidden) and w (hidden) on `device`, in the dtype: rms_norm::make_inputs."""
    dtype = torch.bfloat16 if problem.bf16 else torch.float32

    def generated(tensor: int, count: int) -> torch.Tensor:
        # .to(torch.bfloat16) rounds to nearest, ties to even: Problem::to_dtype.
        return counter_symmetric(problem.seed, tensor, count, device).to(dtype)

    rows, cols = problem.tokens, problem.hidden
    return {"x": generated(TENSOR_X, rows * cols).view(rows, cols), "w": generated(TENSOR_W, cols),
            "dy": generated(TENSOR_DY, rows * cols).view(rows, cols)}


# ---- the check ---------------------------------------------------------------------------------------

class Worst:
    """The largest error seen, and where: rms_norm.cpp's check() measure, |got − exact| / scale, with
    a value that is not finite the worst error there is."""

    def __init__(self):
        self.error, self.got, self.exact, self.where = -1.0, 0.0, 0.0, "-"

    def see(self, name: str, first: int, got: torch.Tensor, exact: torch.Tensor, scale: torch.Tensor) -> None:
        got, exact, scale = got.reshape(-1).double(), exact.reshape(-1), scale.reshape(-1)
        error = (got - exact).abs() / scale.clamp_min(1e-30)
        error = torch.where(torch.isfinite(got), error, torch.full_like(error, float("inf")))
        at = int(torch.argmax(error))
        if float(error[at]) > self.error:
            self.error, self.got, self.exact = float(error[at]), float(got[at]), float(exact[at])
            self.where = f"{name}[{first + at}]"


def compare(name: str, mode: str, problem: Problem, inputs: Dict[str, torch.Tensor],
            outputs: Dict[str, Optional[torch.Tensor]]) -> ks.Check:
    """The outputs of `mode` (y; dx and dw) against float64 arithmetic on the rounded inputs, written
    apart from both implementations as rms_norm::check() is: each element's error is |got − exact|
    divided by the sum of the magnitudes its arithmetic combines, within the dtype's tolerance."""
    shapes = {"y": inputs["x"].shape, "dx": inputs["x"].shape, "dw": inputs["w"].shape}
    missing = [what for what, got in outputs.items() if got is None or got.shape != shapes[what]]
    if missing:
        return ks.Check(False, f"rms_norm {problem.describe()} {mode} ({name}): {', '.join(missing)} not written")
    worst = Worst()
    eps, offset, h = problem.eps, problem.offset, problem.hidden
    w = inputs["w"].double()
    w_offset, w_scale = offset + w, abs(offset) + w.abs()
    dw, dw_scale = torch.zeros_like(w), torch.zeros_like(w)
    rows = max(1, CHECK_BLOCK_VALUES // h)
    for first in range(0, problem.tokens, rows):
        x, dy = inputs["x"][first:first + rows].double(), inputs["dy"][first:first + rows].double()
        rstd = 1.0 / torch.sqrt((x * x).sum(dim=1, keepdim=True) / h + eps)
        if "y" in outputs:
            worst.see("y", first * h, outputs["y"][first:first + rows], x * rstd * w_offset, x.abs() * rstd * w_scale)
        if "dx" in outputs:
            dot = (dy * w_offset * x).sum(dim=1, keepdim=True)  # Σ m·x
            dot_scale = ((dy * x).abs() * w_scale).sum(dim=1, keepdim=True)
            rstd3_over_h = rstd ** 3 / h
            worst.see("dx", first * h, outputs["dx"][first:first + rows], rstd * dy * w_offset - rstd3_over_h * dot * x,
                      rstd * dy.abs() * w_scale + rstd3_over_h * dot_scale * x.abs())
            dw += (dy * x * rstd).sum(dim=0)
            dw_scale += ((dy * x).abs() * rstd).sum(dim=0)
    if "dw" in outputs:
        worst.see("dw", 0, outputs["dw"], dw, dw_scale)
    compared = ", ".join(outputs)
    detail = (f"rms_norm {problem.describe()} {mode} ({name}): {compared} vs float64; worst error {worst.error:.3e} "
              f"(|got-exact|/scale, tolerance {problem.tolerance():.2g}) at {worst.where}: got {worst.got:.9g}, "
              f"exact {worst.exact:.9g}")
    return ks.Check(worst.error <= problem.tolerance(), detail)


# ---- the instance ------------------------------------------------------------------------------------

# The modes, each run by the instance's method of its name.
MODES = ("forward", "backward", "full")


class RmsNormInstance(ks.Instance):
    """One point's tensors and a norm module, bound to the kernel's modes as torch autograd runs them;
    the same class serves both implementations."""

    def __init__(self, problem: Problem, device: str, name: str, norm: torch.nn.Module):
        super().__init__()
        self.problem, self.device, self.name, self.norm = problem, device, name, norm
        self.inputs = make_inputs(problem, device)
        self.norm.weight = torch.nn.Parameter(self.inputs["w"])
        # detach() shares x's storage: no pass writes x, so the check reads the values the pass read.
        self.x = self.inputs["x"].detach().requires_grad_(True)
        # The gradient handed to backward: a copy of dy, since Liger's in-place backward (its
        # default, as the benchmark runs it) writes dx over it. The check starts from dy again.
        self.dy = self.inputs["dy"].clone()
        self.y: Optional[torch.Tensor] = None

    # -- the passes, one call each --

    def forward(self) -> None:
        self.y = self.norm(self.x)

    def backward(self) -> None:
        self.x.grad = None
        self.y.backward(self.dy, retain_graph=True)

    def full(self) -> None:
        self.forward()
        self.backward()

    def pass_of(self, mode: str) -> Callable[[], None]:
        if mode not in MODES:
            raise ValueError(f"{KERNEL}: unknown mode {mode} (one of {', '.join(MODES)})")
        return getattr(self, mode)

    def bind(self, mode: str) -> ks.BoundMode:
        run = self.pass_of(mode)
        # Backward runs through a graph recorded once, here; a graph another mode recorded is freed.
        self.y = self.norm(self.x) if mode == "backward" else None
        return ks.BoundMode(run=run, check=lambda: self.check(mode))

    # -- the check --

    def check(self, mode: str) -> ks.Check:
        return compare(self.name, mode, self.problem, self.inputs, self.outputs_of(mode))

    def outputs_of(self, mode: str) -> Dict[str, Optional[torch.Tensor]]:
        """Runs the mode's pass once, from no gradients, no output and dy afresh (backward after an
        untimed forward), and returns what it wrote: y for a forward pass, dx and dw for a backward one
        (None where it wrote nothing)."""
        run = self.pass_of(mode)
        self.x.grad, self.norm.weight.grad, self.y = None, None, None
        self.dy.copy_(self.inputs["dy"])
        if mode == "backward":
            self.forward()
        run()
        outputs = {}
        if mode != "backward":
            outputs["y"] = self.y
        if mode != "forward":
            outputs["dx"], outputs["dw"] = self.x.grad, self.norm.weight.grad
        return outputs

    def device_bytes(self) -> int:
        # x, w, dy and the copy of dy on the GPU; a CPU instance holds no device memory, as the C++ cpu
        # one reports.
        if self.device == "cpu":
            return 0
        element = self.inputs["x"].element_size()
        return element * (3 * self.problem.tokens * self.problem.hidden + self.problem.hidden)


# ---- the implementations -----------------------------------------------------------------------------

class LlamaRMSNorm(torch.nn.Module):
    """The benchmark's LlamaRMSNorm, as it is there; its weight is set by the instance."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def refuse_what_llama_cannot_express(problem: Problem) -> None:
    if problem.casting_mode != "llama":
        raise ks.Skip(f"the benchmark's LlamaRMSNorm casts as casting_mode llama only (x·rstd rounded to the "
                      f"dtype, then times w); casting_mode {problem.casting_mode} needs cpu, cuda or liger")
    if problem.offset != 0:
        raise ks.Skip(f"the benchmark's LlamaRMSNorm adds no offset to its weight; offset {problem.offset:g} "
                      f"needs cpu, cuda or liger")


@ks.implementation(KERNEL, "torch", backend="any", packages=("torch",),
                   help="the torch provider of Liger's benchmark: LlamaRMSNorm in plain torch ops "
                        "(casting_mode llama, offset 0)")
def make_torch(params: dict, device: str) -> ks.Instance:
    problem = Problem.of(params)
    refuse_what_llama_cannot_express(problem)
    return RmsNormInstance(problem, device, "torch", LlamaRMSNorm(problem.hidden, eps=problem.eps).to(device))


def import_liger():
    try:
        from liger_kernel.transformers.rms_norm import LigerRMSNorm
    except ImportError as error:
        raise ks.Skip(f"liger_kernel is not importable: {error}") from error
    return LigerRMSNorm


@ks.implementation(KERNEL, "liger", backend="cuda", packages=("liger-kernel", "torch"),
                   labels={"liger_version": "liger-kernel"},
                   help="Liger-Kernel's LigerRMSNorm (Triton), called as its benchmark calls it")
def make_liger(params: dict, device: str) -> ks.Instance:
    LigerRMSNorm = import_liger()
    problem = Problem.of(params)
    norm = LigerRMSNorm(hidden_size=problem.hidden, eps=problem.eps, offset=problem.offset,
                        casting_mode=problem.casting_mode).to(device)
    return RmsNormInstance(problem, device, "liger", norm)
