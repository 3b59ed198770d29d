"""gemm's `torch` implementation: torch.matmul on the inputs the C++ implementations see, checked the
way gemm::check_entries (kernels/gemm/gemm.cpp) checks them.

Inputs (the point's `inputs` parameter):
- counter: A (tensor 1) and B (tensor 2) from the counter-based generator, exactly
  gemm::make_matrix: counter_symmetric at the row-major index, rounded to bf16 for dtype bf16.
- torch_rand: torch.manual_seed(seed), then torch.rand in the dtype for A, then for B, on the device.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple

import torch

from .. import api as ks
from ..inputs import counter_symmetric

TENSOR_A, TENSOR_B = 1, 2
# Tensor id of the sampled entries' positions: independent of the inputs (gemm.cpp's matrix id 3).
TENSOR_SAMPLE = 3
# As gemm.cpp: entries compared when the output is large; smaller outputs are compared whole.
SAMPLED_ENTRIES = 64
COMPARE_ALL_UP_TO = 4096
# Doubles held at once by the dot products of the check (entries × K).
CHECK_BLOCK_VALUES = 1 << 22

INPUT_DRAWS = ("counter", "torch_rand")


@dataclass(frozen=True)
class Shape:
    """A point's shape as gemm::Shape reads it, plus the draw of its inputs."""
    m: int
    n: int
    k: int
    bf16: bool
    seed: int
    inputs: str = "counter"

    @staticmethod
    def of(params: dict) -> "Shape":
        draw = params.get("inputs", "counter")
        if draw not in INPUT_DRAWS:
            raise ValueError(f"gemm: inputs {draw!r} is not one of {INPUT_DRAWS}")
        return Shape(int(params["M"]), int(params["N"]), int(params["K"]), params["dtype"] == "bf16",
                     int(params["seed"]), draw)

    @property
    def dtype(self) -> torch.dtype:
        return torch.bfloat16 if self.bf16 else torch.float32

    def describe(self) -> str:
        return f"{self.m}x{self.n}x{self.k} {'bf16' if self.bf16 else 'fp32'}"

    def tolerance(self) -> float:
        # gemm::tolerance: fp32 accumulation over K terms; a bf16 output adds its own rounding.
        return 1e-2 if self.bf16 else 1e-5


def make_inputs(params: dict, device: str) -> Dict[str, torch.Tensor]:
    """A (M×K) and B (K×N) in the dtype, on `device`, as the point's `inputs` parameter draws them."""
    shape = Shape.of(params)
    if shape.inputs == "torch_rand":
        torch.manual_seed(shape.seed)
        a = torch.rand(shape.m, shape.k, device=device, dtype=shape.dtype)
        b = torch.rand(shape.k, shape.n, device=device, dtype=shape.dtype)
        return {"a": a, "b": b}
    return {"a": counter_matrix(shape, TENSOR_A, shape.m, shape.k, device),
            "b": counter_matrix(shape, TENSOR_B, shape.k, shape.n, device)}


def counter_matrix(shape: Shape, tensor: int, rows: int, cols: int, device: str) -> torch.Tensor:
    # .to(torch.bfloat16) rounds to nearest, ties to even: ks::round_to_bf16.
    values = counter_symmetric(shape.seed, tensor, rows * cols, device).view(rows, cols)
    return values.to(shape.dtype)


def entries_to_compare(shape: Shape) -> List[Tuple[int, int]]:
    """The entries gemm::check_entries compares, in its order: every entry of a small output; else
    the four corners and positions drawn from tensor 3, computed in float32 as the C++ expression
    (u + 1.0f) * 0.5f * m does, then truncated."""
    if shape.m * shape.n <= COMPARE_ALL_UP_TO:
        return [(row, col) for row in range(shape.m) for col in range(shape.n)]
    entries = [(0, 0), (shape.m - 1, shape.n - 1), (0, shape.n - 1), (shape.m - 1, 0)]
    drawn = SAMPLED_ENTRIES - len(entries)
    u = counter_symmetric(shape.seed, TENSOR_SAMPLE, 2 * drawn)
    one, half = torch.tensor(1.0), torch.tensor(0.5)
    # 0-dim float32 operands keep every step in float32, as the C++ float arithmetic.
    rows = ((u[0::2] + one) * half * torch.tensor(float(shape.m))).to(torch.int64)
    cols = ((u[1::2] + one) * half * torch.tensor(float(shape.n))).to(torch.int64)
    for row, col in zip(rows.tolist(), cols.tolist()):
        entries.append((min(row, shape.m - 1), min(col, shape.n - 1)))
    return entries


def exact_entries(a: torch.Tensor, b: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor):
    """Double-precision dot products A[row,:]·B[:,col] of the rounded inputs, and Σ|A[row,k]·B[k,col]|
    (the scale of a dot product's rounding error), for each (row, col)."""
    k = a.shape[1]
    block = max(1, CHECK_BLOCK_VALUES // max(k, 1))
    exact, scale = [], []
    for first in range(0, rows.numel(), block):
        r, c = rows[first:first + block], cols[first:first + block]
        products = a[r].double() * b[:, c].t().double()
        exact.append(products.sum(dim=1))
        scale.append(products.abs().sum(dim=1))
    return torch.cat(exact).cpu(), torch.cat(scale).cpu()


def check_entries(shape: Shape, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> ks.Check:
    """gemm::check_entries on the instance's own tensors: the error of an entry is
    |got − exact| / Σ_k |A[row,k]·B[k,col]|, and the worst one must be within the dtype's tolerance."""
    entries = entries_to_compare(shape)
    rows = torch.tensor([row for row, _ in entries], dtype=torch.int64, device=a.device)
    cols = torch.tensor([col for _, col in entries], dtype=torch.int64, device=a.device)
    exact, scale = exact_entries(a, b, rows, cols)
    got = c[rows, cols].double().cpu()
    error = (got - exact).abs() / scale.clamp_min(1e-30)
    # A NaN or infinite output is the worst error there is.
    error = torch.where(torch.isfinite(got), error, torch.full_like(error, float("inf")))
    worst = int(torch.argmax(torch.nan_to_num(error, nan=float("inf"))))
    worst_error = float(error[worst])
    row, col = entries[worst]
    detail = (f"gemm {shape.describe()}: {len(entries)} entries vs double dot products; worst error "
              f"{worst_error:.3e} (|got-exact|/sum|a*b|, tolerance {shape.tolerance():.1e}) at C[{row},{col}]: "
              f"got {float(got[worst]):.9g}, exact {float(exact[worst]):.9g}")
    return ks.Check(passed=worst_error <= shape.tolerance(), detail=detail)


class TorchGemm(ks.Instance):
    """C = torch.matmul(A, B), the output kept for the check."""

    def __init__(self, params: dict, device: str):
        super().__init__()
        self.shape = Shape.of(params)
        inputs = make_inputs(params, device)
        self.a, self.b = inputs["a"], inputs["b"]
        self.c = None

    def bind(self, mode: str) -> ks.BoundMode:
        if mode != "forward":
            raise ValueError(f"gemm: unknown mode {mode} (gemm has forward only)")
        return ks.BoundMode(run=self.run, check=self.check)

    def run(self) -> None:
        self.c = torch.matmul(self.a, self.b)

    def check(self) -> ks.Check:
        # The output of this call alone: an earlier call's result must not pass for this one.
        self.c = None
        self.run()
        if self.c is None:
            return ks.Check(False, f"gemm {self.shape.describe()}: the run wrote no output")
        return check_entries(self.shape, self.a, self.b, self.c)

    def device_bytes(self) -> int:
        # A, B and C on the GPU; a CPU instance holds no device memory, as the C++ cpu one reports.
        if self.a.device.type == "cpu":
            return 0
        element = self.a.element_size()
        return element * (self.shape.m * self.shape.k + self.shape.k * self.shape.n + self.shape.m * self.shape.n)


@ks.implementation("gemm", "torch", backend="any", help="torch.matmul", packages=("torch",))
def make(params: dict, device: str) -> ks.Instance:
    return TorchGemm(params, device)
