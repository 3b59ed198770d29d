"""distill_cosine_loss's Python implementations, the two providers of Liger-Kernel's
benchmark/scripts/benchmark_distill_cosine_loss.py (commit 08906d3d):

- `torch`: the torch provider's computation in plain torch ops (linear layers, cross-entropy, cosine
  similarity), written here: logits in the dtype, cast to float32, cross-entropy on the student's,
  both divided by the temperature, F.normalize then F.cosine_similarity, the teacher under no_grad.
- `liger`: LigerFusedLinearCosineSimilarityFunction.apply, called with the benchmark's arguments.

Both see the C++ implementations' inputs bit for bit (`inputs: counter`, kernels/distill_cosine/
reference.cpp make_inputs), or the benchmark's own draw (`inputs: torch_rand`). Both time in each
mode the operation kernels/distill_cosine/README.md "Modes" names, the C++ implementations' too:
forward, the loss and the student's gradients (torch: the loss, then autograd's backward; liger: the
function's forward, which computes both); backward, the stored gradients scaled by the incoming
gradient, nothing when it is 1 (torch: a test of that gradient; liger: loss.backward through a graph
recorded once at bind, which runs the function's backward); full, both; no-grad-forward, the loss
alone under torch.no_grad() (where Liger's function still computes its gradients: `liger_work`).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

import torch
import torch.nn.functional as F

from .. import api as ks
from ..inputs import counter_uniform

KERNEL = "distill_cosine_loss"

# Tensor ids of the counter-based inputs (distill_cosine.h `Tensor`).
STUDENT_INPUT, STUDENT_WEIGHT, TEACHER_INPUT, TEACHER_WEIGHT = 1, 2, 3, 4
STUDENT_BIAS, TEACHER_BIAS, TARGETS, IGNORED = 5, 6, 7, 8

INPUT_DRAWS = ("counter", "torch_rand")

# The C++ checks' tolerances: relative error of the loss, and ‖out − ref‖ / ‖ref‖ of each gradient.
LOSS_TOLERANCE, GRADIENT_TOLERANCE = 2e-3, 2e-2
# Above tokens·vocab·hidden of this much, the check compares at a reduced shape, as cpu.cpp does
# (2^28 on the CPU; on a GPU the limit under which cuda_support.cu compares with the reference).
FULL_CHECK_LIMIT = {"cpu": float(2 ** 28), "cuda": 2e9}
REDUCED_SHAPE = {"tokens": 128, "hidden": 512, "vocab": 4093}
# Float64 logits the reference holds at once (rows of a token chunk × vocab).
REFERENCE_CHUNK_VALUES = 1 << 22
# F.normalize's eps and F.cosine_similarity's.
NORMALIZE_EPS, COSINE_EPS = 1e-12, 1e-8


@dataclass(frozen=True)
class Problem:
    """A point's parameters, as distill::Problem reads them, plus the draw of its inputs."""
    tokens: int
    hidden: int
    vocab: int
    bf16: bool
    weight_hard_loss: float
    weight_soft_loss: float
    beta: float
    temperature: float
    ignore_index: int
    chunk_size: Optional[int]  # None: auto
    bias: bool
    normalize: str  # "tokens" or "valid_tokens"
    ignored_fraction: float
    seed: int
    inputs: str

    @staticmethod
    def of(params: dict) -> "Problem":
        draw = params.get("inputs", "counter")
        if draw not in INPUT_DRAWS:
            raise ValueError(f"{KERNEL}: inputs {draw!r} is not one of {INPUT_DRAWS}")
        chunk = params["chunk_size"]
        return Problem(int(params["tokens"]), int(params["hidden"]), int(params["vocab"]), params["dtype"] == "bf16",
                       float(params["weight_hard_loss"]), float(params["weight_soft_loss"]), float(params["beta"]),
                       float(params["temperature"]), int(params["ignore_index"]),
                       None if chunk == "auto" else int(chunk), bool(params["bias"]), params["normalize"],
                       float(params["ignored_fraction"]), int(params["seed"]), draw)

    @property
    def student_hidden(self) -> int:
        return self.hidden // 2

    @property
    def dtype(self) -> torch.dtype:
        return torch.bfloat16 if self.bf16 else torch.float32

    def size(self) -> float:
        return float(self.tokens) * float(self.vocab) * float(self.hidden)

    def describe(self) -> str:
        return f"tokens {self.tokens} hidden {self.hidden} vocab {self.vocab}"

    def divisor(self, labelled: int) -> float:
        """The loss's divisor N (distill::loss_divisor): all tokens, or the labelled ones (at least 1)."""
        return float(self.tokens) if self.normalize == "tokens" else float(max(labelled, 1))


# ---- inputs ----------------------------------------------------------------------------------------

def make_inputs(params: dict, device: str) -> Dict[str, Optional[torch.Tensor]]:
    """The point's inputs on `device`, in the dtype (targets int64): xs (BT×H/2), ws (V×H/2),
    xt (BT×H), wt (V×H), bs and bt (V, None without bias), targets (BT). None requires grad."""
    problem = Problem.of(params)
    if problem.inputs == "torch_rand":
        return torch_rand_inputs(problem, device)
    return counter_inputs(problem, device)


def counter_inputs(problem: Problem, device: str) -> Dict[str, Optional[torch.Tensor]]:
    """distill::make_inputs: inputs uniform in [0, 1), weights and biases as nn.Linear's range, every
    value a pure function of (seed, tensor, index), rounded to the dtype."""
    bt, h, hs, v = problem.tokens, problem.hidden, problem.student_hidden, problem.vocab
    inputs = {
        "xs": counter_uniform(problem.seed, STUDENT_INPUT, bt * hs, device).view(bt, hs),
        "ws": linear_range_tensor(problem.seed, STUDENT_WEIGHT, v * hs, hs, device).view(v, hs),
        "xt": counter_uniform(problem.seed, TEACHER_INPUT, bt * h, device).view(bt, h),
        "wt": linear_range_tensor(problem.seed, TEACHER_WEIGHT, v * h, h, device).view(v, h),
        "bs": linear_range_tensor(problem.seed, STUDENT_BIAS, v, hs, device) if problem.bias else None,
        "bt": linear_range_tensor(problem.seed, TEACHER_BIAS, v, h, device) if problem.bias else None,
    }
    # .to(torch.bfloat16) rounds to nearest, ties to even: ks::round_to_bf16.
    inputs = {name: None if t is None else t.to(problem.dtype) for name, t in inputs.items()}
    inputs["targets"] = counter_targets(problem, device)
    return inputs


def nn_linear_bound(fan_in: int) -> float:
    """1.0f / sqrtf(fan_in), in float32 as reference.cpp and the device generator compute it."""
    return float(torch.tensor(1.0) / torch.tensor(float(fan_in)).sqrt())


def linear_range_tensor(seed: int, tensor: int, count: int, fan_in: int, device: str) -> torch.Tensor:
    # (2u − 1) · bound, each step a correctly rounded float32 operation as in the C++ expression.
    values = counter_uniform(seed, tensor, count, device)
    return values.mul_(2.0).sub_(1.0).mul_(nn_linear_bound(fan_in))


def counter_targets(problem: Problem, device: str) -> torch.Tensor:
    """y_i = min(floor(u·V), V − 1), or ignore_index where the second draw is below ignored_fraction;
    both in double, as make_targets compares a float widened to double with the double fraction."""
    u = counter_uniform(problem.seed, TARGETS, problem.tokens, device).double()
    targets = torch.floor(u * float(problem.vocab)).to(torch.int64).clamp_max(problem.vocab - 1)
    ignored = counter_uniform(problem.seed, IGNORED, problem.tokens, device).double() < problem.ignored_fraction
    return targets.masked_fill(ignored, problem.ignore_index)


def torch_rand_inputs(problem: Problem, device: str) -> Dict[str, Optional[torch.Tensor]]:
    """The benchmark's draw after torch.manual_seed(seed): the student's and teacher's nn.Linear
    layers made on the CPU and cast to the dtype (their default initialisation), then on the device
    torch.rand inputs in the dtype and torch.randint targets. The benchmark labels every token; with
    ignored_fraction > 0 a further torch.rand draw marks the ignored ones."""
    torch.manual_seed(problem.seed)
    student = torch.nn.Linear(problem.student_hidden, problem.vocab, bias=problem.bias).to(dtype=problem.dtype)
    teacher = torch.nn.Linear(problem.hidden, problem.vocab, bias=problem.bias).to(dtype=problem.dtype)
    xs = torch.rand(problem.tokens, problem.student_hidden, device=device, dtype=problem.dtype)
    xt = torch.rand(problem.tokens, problem.hidden, device=device, dtype=problem.dtype)
    targets = torch.randint(0, problem.vocab, (problem.tokens,), device=device, dtype=torch.long)
    if problem.ignored_fraction > 0:
        ignored = torch.rand(problem.tokens, device=device, dtype=torch.float64) < problem.ignored_fraction
        targets = targets.masked_fill(ignored, problem.ignore_index)

    def moved(parameter: Optional[torch.nn.Parameter]) -> Optional[torch.Tensor]:
        return None if parameter is None else parameter.detach().to(device)

    return {"xs": xs, "ws": moved(student.weight), "xt": xt, "wt": moved(teacher.weight),
            "bs": moved(student.bias), "bt": moved(teacher.bias), "targets": targets}


# ---- losses ----------------------------------------------------------------------------------------

@dataclass
class Tensors:
    """What a loss function reads: the student's tensors require grad, as the benchmark's."""
    xs: torch.Tensor
    ws: torch.Tensor
    xt: torch.Tensor
    wt: torch.Tensor
    bs: Optional[torch.Tensor]
    bt: Optional[torch.Tensor]
    targets: torch.Tensor


LossFunction = Callable[[Problem, Tensors, float], torch.Tensor]


def product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b as a GPU computes it: bf16 operands, products summed in float32, a bf16 result. On the
    GPU that is a @ b itself (cuBLAS accumulates in float32). On a CPU without bf16 dot instructions
    torch 1.13 sums bf16 products in bf16 (2% off over 300 terms), so there the operands are widened
    and the result rounded, and a CPU run computes the function a GPU run does."""
    if a.dtype == torch.bfloat16 and a.device.type == "cpu":
        return (a.float() @ b.float()).to(torch.bfloat16)
    return a @ b


def torch_loss(problem: Problem, t: Tensors, divisor: float) -> torch.Tensor:
    """The torch provider's loss: unchunked logits in the dtype, cast to float32, the hard loss by
    cross-entropy on the untempered student logits, then both divided by the temperature in place,
    normalised and compared by F.cosine_similarity. Both terms are summed and divided by N."""
    student_logits = product(t.xs, t.ws.t())
    if t.bs is not None:
        student_logits = student_logits + t.bs
    with torch.no_grad():
        teacher_logits = product(t.xt, t.wt.t())
        if t.bt is not None:
            teacher_logits = teacher_logits + t.bt
    student_logits = student_logits.float()
    teacher_logits = teacher_logits.float()
    hard_loss = F.cross_entropy(student_logits, t.targets, ignore_index=problem.ignore_index, reduction="sum")
    # In place, as the provider divides them: cross-entropy keeps its own output, not the logits.
    student_logits /= problem.temperature
    teacher_logits /= problem.temperature
    cosine = F.cosine_similarity(F.normalize(student_logits, p=2, dim=-1), F.normalize(teacher_logits, p=2, dim=-1),
                                 dim=-1)
    soft_loss = (problem.beta * (1 - cosine)).sum()
    return (problem.weight_hard_loss * hard_loss + problem.weight_soft_loss * soft_loss) / divisor


def liger_loss(function) -> LossFunction:
    """LigerFusedLinearCosineSimilarityFunction.apply with the benchmark's nine arguments, then
    beta, ignore_index, temperature, compiled and chunk_size, which the benchmark leaves at Liger's
    defaults (0.5, −100, 1.0, True, 1024: the kernel's defaults too) and a point may change."""

    def loss(problem: Problem, t: Tensors, divisor: float) -> torch.Tensor:
        return function.apply(t.xs, t.ws, t.xt, t.wt, t.targets, t.bs, t.bt, problem.weight_hard_loss,
                              problem.weight_soft_loss, problem.beta, problem.ignore_index, problem.temperature,
                              True, problem.chunk_size)

    return loss


# ---- the float64 reference and the comparison ------------------------------------------------------

@dataclass
class Outputs:
    """A pass's results: the loss and the student's gradients (None where the pass left none)."""
    loss: float
    grad_xs: Optional[torch.Tensor] = None
    grad_ws: Optional[torch.Tensor] = None
    grad_bs: Optional[torch.Tensor] = None


def labelled_count(problem: Problem, targets: torch.Tensor) -> int:
    return int((targets != problem.ignore_index).sum())


def reference(problem: Problem, inputs: Dict[str, Optional[torch.Tensor]]) -> Outputs:
    """The loss and student gradients in float64 on the inputs' device, a chunk of tokens at a time.
    Written apart from torch_loss (logsumexp and explicit norms, no cross_entropy, F.normalize or
    F.cosine_similarity), following README's formulas; autograd gives the gradients."""
    def as_double(name: str, grad: bool = False) -> Optional[torch.Tensor]:
        t = inputs[name]
        return None if t is None else t.detach().double().requires_grad_(grad)

    xs, xt = as_double("xs"), as_double("xt")
    ws, bs = as_double("ws", grad=True), as_double("bs", grad=True)
    wt, bt = as_double("wt"), as_double("bt")
    targets = inputs["targets"]
    labelled = targets != problem.ignore_index
    divisor = problem.divisor(int(labelled.sum()))
    grad_xs = torch.empty_like(xs)
    loss = 0.0
    rows = max(1, REFERENCE_CHUNK_VALUES // problem.vocab)
    for first in range(0, problem.tokens, rows):
        chunk = slice(first, first + rows)
        xs_chunk = xs[chunk].clone().requires_grad_(True)
        chunk_loss = reference_chunk_loss(problem, xs_chunk, ws, bs, xt[chunk], wt, bt, targets[chunk],
                                          labelled[chunk], divisor)
        chunk_loss.backward()
        grad_xs[chunk] = xs_chunk.grad
        loss += float(chunk_loss.detach())
    return Outputs(loss, grad_xs, ws.grad, None if bs is None else bs.grad)


def reference_chunk_loss(problem: Problem, xs, ws, bs, xt, wt, bt, targets, labelled, divisor) -> torch.Tensor:
    s = xs @ ws.t() + (bs if bs is not None else 0.0)
    with torch.no_grad():
        t = xt @ wt.t() + (bt if bt is not None else 0.0)
    # hard: logsumexp(s) − s[y] over the labelled tokens (an ignored token reads column 0, then drops out).
    picked = s.gather(1, targets.masked_fill(~labelled, 0).unsqueeze(1)).squeeze(1)
    hard = torch.where(labelled, torch.logsumexp(s, dim=-1) - picked, torch.zeros_like(picked)).sum()
    # soft: 1 − cos of the tempered rows, each normalised with F.normalize's clamp, then cosine's.
    u, w = s / problem.temperature, t / problem.temperature
    a = u / u.norm(dim=-1, keepdim=True).clamp_min(NORMALIZE_EPS)
    b = w / w.norm(dim=-1, keepdim=True).clamp_min(NORMALIZE_EPS)
    cosine = (a * b).sum(dim=-1) / (a.norm(dim=-1).clamp_min(COSINE_EPS) * b.norm(dim=-1).clamp_min(COSINE_EPS))
    soft = (1.0 - cosine).sum()
    return (problem.weight_hard_loss * hard + problem.weight_soft_loss * problem.beta * soft) / divisor


def relative_error(got: Optional[torch.Tensor], want: torch.Tensor) -> float:
    """‖got − want‖ / ‖want‖ (distill::relative_error); infinite for a gradient the pass left out.
    NaN anywhere gives NaN, which no tolerance accepts."""
    if got is None or got.shape != want.shape:
        return math.inf
    difference = got.detach().double().to(want.device) - want
    squared_error, squared_reference = float((difference * difference).sum()), float((want * want).sum())
    return math.sqrt(squared_error / squared_reference) if squared_reference > 0 else math.sqrt(squared_error)


def compare(name: str, mode: str, problem: Problem, got: Outputs, want: Outputs, note: str = "") -> ks.Check:
    """The C++ checks' comparison: loss within 2e-3 relative, each gradient within 2e-2."""
    passed, parts = True, []

    def judge(what: str, error: float, tolerance: float) -> None:
        nonlocal passed
        ok = error <= tolerance  # False for NaN
        passed = passed and ok
        parts.append(f"{what} rel.err {error:.3g} (<= {tolerance:g}){'' if ok else ' FAILED'}")

    loss_error = abs(got.loss - want.loss) / max(abs(want.loss), 1e-30)
    judge("loss", loss_error, LOSS_TOLERANCE)
    if mode != "no-grad-forward":
        judge("grad Xs", relative_error(got.grad_xs, want.grad_xs), GRADIENT_TOLERANCE)
        judge("grad Ws", relative_error(got.grad_ws, want.grad_ws), GRADIENT_TOLERANCE)
        if problem.bias:
            judge("grad bs", relative_error(got.grad_bs, want.grad_bs), GRADIENT_TOLERANCE)
    detail = (f"{name} vs the float64 reference ({mode}) at {problem.describe()}{note}: " + "; ".join(parts) +
              f" (loss {got.loss:.9g} vs {want.loss:.9g})")
    return ks.Check(passed, detail)


# ---- the instances ---------------------------------------------------------------------------------

# The method that runs each mode's pass: looked up on the instance when called.
PASSES = {"forward": "forward", "backward": "backward", "full": "full", "no-grad-forward": "no_grad_forward"}


class DistillInstance(ks.Instance):
    """One point's tensors and a loss function, bound to the kernel's modes; a subclass says how its
    library's calls make the forward, backward and full passes."""

    def __init__(self, params: dict, device: str, name: str, loss_function: LossFunction):
        super().__init__()
        self.params, self.device, self.name, self.loss_function = dict(params), device, name, loss_function
        self.problem = Problem.of(params)
        self.inputs = make_inputs(params, device)
        self.labelled = labelled_count(self.problem, self.inputs["targets"])
        self.divisor = self.problem.divisor(self.labelled)
        self.tensors = self._tensors_for_autograd()
        self.loss: Optional[torch.Tensor] = None

    def _tensors_for_autograd(self) -> Tensors:
        # The benchmark's student input requires grad, and the weights and biases are nn.Linear
        # parameters (the teacher's too, though no gradient reaches them). detach() shares the
        # storage: no pass writes its inputs, so the reference reads the same values.
        def leaf(name: str, grad: bool) -> Optional[torch.Tensor]:
            t = self.inputs[name]
            return None if t is None else t.detach().requires_grad_(grad)

        return Tensors(leaf("xs", True), leaf("ws", True), leaf("xt", False), leaf("wt", True), leaf("bs", True),
                       leaf("bt", True), self.inputs["targets"])

    def student_leaves(self) -> List[torch.Tensor]:
        """The tensors that receive gradients: Xs, Ws and, with bias, bs."""
        return [t for t in (self.tensors.xs, self.tensors.ws, self.tensors.bs) if t is not None]

    # -- the passes, one call each (forward, backward and full are the subclasses') --

    def forward(self) -> None:
        raise NotImplementedError

    def backward(self) -> None:
        raise NotImplementedError

    def full(self) -> None:
        raise NotImplementedError

    def no_grad_forward(self) -> None:
        with torch.no_grad():
            self.loss = self.loss_function(self.problem, self.tensors, self.divisor)

    def _pass(self, mode: str) -> Callable[[], None]:
        if mode not in PASSES:
            raise ValueError(f"{KERNEL}: unknown mode {mode} (one of {', '.join(PASSES)})")
        return getattr(self, PASSES[mode])

    def bind(self, mode: str) -> ks.BoundMode:
        run = self._pass(mode)
        self.loss = None  # frees the graph another mode recorded
        if mode == "backward":
            self.forward()  # what every backward call works on, made once, untimed
        return ks.BoundMode(run=run, check=lambda: self.check(mode))

    # -- the check --

    def check(self, mode: str) -> ks.Check:
        if self.problem.size() <= FULL_CHECK_LIMIT.get(self.device, FULL_CHECK_LIMIT["cpu"]):
            return compare(self.name, mode, self.problem, self.outputs_of(mode), reference(self.problem, self.inputs))
        # The same parameters at a shape the float64 reference computes in seconds, as cpu.cpp does.
        reduced = dict(self.params)
        for key, limit in REDUCED_SHAPE.items():
            reduced[key] = min(int(self.params[key]), limit)
        small = type(self)(reduced, self.device, self.name, self.loss_function)
        return compare(self.name, mode, small.problem, small.outputs_of(mode), reference(small.problem, small.inputs),
                       note=" (reduced shape)")

    def outputs_of(self, mode: str) -> Outputs:
        """Runs the mode's pass once on cleared gradients and returns what it produced. Backward
        works on what a forward pass left, which an untimed forward makes first, as bind does."""
        run = self._pass(mode)
        for t in self.student_leaves():
            t.grad = None
        self.loss = None
        if mode == "backward":
            self.forward()
        run()
        if self.loss is None:
            return Outputs(math.nan)
        self.hand_over_gradients(mode)
        loss = float(self.loss.detach())
        if mode == "no-grad-forward":
            return Outputs(loss)
        bias_grad = None if self.tensors.bs is None else self.tensors.bs.grad
        return Outputs(loss, self.tensors.xs.grad, self.tensors.ws.grad, bias_grad)

    def hand_over_gradients(self, mode: str) -> None:
        """Untimed, after the mode's pass: puts the gradients the pass computed into the tensors'
        .grad where the pass kept them elsewhere."""

    def device_bytes(self) -> int:
        # The inputs on the GPU; a CPU instance holds no device memory, as the C++ cpu ones report.
        if self.device == "cpu":
            return 0
        return sum(t.numel() * t.element_size() for t in self.inputs.values() if t is not None)


class TorchDistill(DistillInstance):
    """The kernel's modes made of plain torch calls, each the operation the C++ implementations and
    Liger time in it: forward computes the loss, then the student's gradients by autograd (what
    Liger's forward does inside); backward scales the stored gradients by the incoming gradient,
    which is 1, so it does nothing (what Liger's backward and cpu.cpp's do); full does both."""

    def __init__(self, params: dict, device: str, name: str, loss_function: LossFunction):
        super().__init__(params, device, name, loss_function)
        self.grad_output = 1.0  # the incoming gradient of a loss that is the end of the graph

    def forward(self) -> None:
        # dXs is the gradient of this call's input: written afresh each call, as the benchmark's
        # grad_to_none clears it between calls and Liger's forward makes a new one each call. The
        # weights' and bias's gradients accumulate over calls, as autograd accumulates them in both
        # of the benchmark's providers (the check clears them before its call).
        self.tensors.xs.grad = None
        loss = self.loss_function(self.problem, self.tensors, self.divisor)
        loss.backward()
        self.loss = loss.detach()  # the graph is spent: only the loss's value is kept

    def backward(self) -> None:
        # Liger's backward: the stored gradients times the incoming gradient, skipped when it is 1.
        if self.grad_output == 1.0:
            return
        for t in self.student_leaves():
            t.grad.mul_(self.grad_output)

    def full(self) -> None:
        self.forward()
        self.backward()


class LigerDistill(DistillInstance):
    """Liger's function as its benchmark calls it under autograd: forward is the function's forward
    (the loss and the gradients, kept in its autograd context); backward is
    loss.backward(retain_graph=True) through a forward recorded once at bind, which runs the
    function's backward and hands the gradients to the tensors; full does both."""

    def forward(self) -> None:
        self.loss = self.loss_function(self.problem, self.tensors, self.divisor)

    def backward(self) -> None:
        # The benchmark's grad_to_none=[student input]: its gradient is written afresh each call;
        # the weights' accumulate, as there.
        self.tensors.xs.grad = None
        self.loss.backward(retain_graph=True)

    def full(self) -> None:
        self.forward()
        self.loss.backward()

    def hand_over_gradients(self, mode: str) -> None:
        # The forward's gradients wait in the function's context until a backward returns them.
        if mode == "forward":
            self.loss.backward()


# ---- the implementations ---------------------------------------------------------------------------

def kernel_work(params: dict, mode: str) -> ks.Work:
    """The kernel's work of one call as distill_cosine.cpp's work() counts it (the rank takes that one
    for the implementations that declare none, torch among them): forward and full, the student's and
    the teacher's logits and the gradients' two products, reading the inputs and writing the
    gradients; no-grad-forward, the logits over the inputs; backward, nothing (the incoming gradient
    is 1)."""
    p = Problem.of(params)
    bt, v, h, hs = float(p.tokens), float(p.vocab), float(p.hidden), float(p.student_hidden)
    size = 2.0 if p.bf16 else 4.0
    logits, products = 2.0 * bt * v * (hs + h), 2.0 * bt * v * (hs + hs)
    inputs = size * (bt * hs + v * hs + bt * h + v * h + (2 * v if p.bias else 0)) + 8.0 * bt
    gradients = size * (bt * hs + v * hs + (v if p.bias else 0))
    if mode in ("forward", "full"):
        return ks.Work(flops=logits + products, bytes=inputs + gradients)
    if mode == "no-grad-forward":
        return ks.Work(flops=logits, bytes=inputs)
    if mode == "backward":
        return ks.Work(flops=0.0, bytes=0.0)
    raise ValueError(f"{KERNEL}: unknown mode {mode}")


def liger_work(params: dict, mode: str) -> ks.Work:
    """The kernel's work, but for no-grad-forward: Liger's function computes the gradients in its
    forward whether torch records a graph or not, so under torch.no_grad() it does a forward's work."""
    return kernel_work(params, "forward" if mode == "no-grad-forward" else mode)


@ks.implementation(KERNEL, "torch", backend="any", packages=("torch",),
                   help="the torch provider of Liger's benchmark: unchunked float32 logits, cross_entropy, "
                        "F.normalize and F.cosine_similarity; gradients by autograd in forward")
def make_torch(params: dict, device: str) -> ks.Instance:
    # chunk_size does not apply: the torch provider never chunks (as the C++ `naive`).
    return TorchDistill(params, device, "torch", torch_loss)


def import_liger():
    try:
        from liger_kernel.chunked_loss.cosine_similarity_loss import LigerFusedLinearCosineSimilarityFunction
    except ImportError as error:
        raise ks.Skip(f"liger_kernel is not importable: {error}") from error
    return LigerFusedLinearCosineSimilarityFunction


@functools.lru_cache(maxsize=None)
def liger_divides_by_labelled_tokens(function, device: str) -> bool:
    """Whether the installed Liger divides the loss by the labelled tokens (from v0.6.5) rather than
    by all tokens (to v0.6.4, as at 08906d3d): its loss on two equal tokens, one of them ignored,
    with the hard loss alone, is that token's cross-entropy or half of it."""
    x = torch.ones(2, 2, device=device, requires_grad=True)
    w = torch.eye(2, device=device, requires_grad=True)
    targets = torch.tensor([0, -100], device=device)
    loss = float(function.apply(x, w, x.detach(), w.detach(), targets, None, None, 1.0, 0.0, 0.5, -100, 1.0,
                                False, 1024).detach())
    token_loss = float(F.cross_entropy((x @ w.t())[:1], targets[:1]))
    return abs(loss - token_loss) < abs(loss - token_loss / 2)


def refuse_auto_chunks(problem: Problem) -> None:
    if problem.chunk_size is None:
        raise ks.Skip("Liger takes chunk_size as a number of tokens; chunk_size auto is the C++ "
                      "implementations' choice")


def refuse_other_divisor(problem: Problem, instance: DistillInstance, function) -> None:
    """Liger divides by one N only, which depends on its version: a point that asks for the other
    one (and has ignored tokens, where the two differ) is not measured."""
    if instance.labelled == problem.tokens:
        return  # every token labelled: both divisors are BT
    by_labelled = liger_divides_by_labelled_tokens(function, instance.device)
    if by_labelled and problem.normalize == "tokens":
        raise ks.Skip("the installed liger-kernel divides the loss by the labelled tokens (Liger from v0.6.5); "
                      "normalize: tokens with ignored tokens needs Liger as at 08906d3d (v0.6.0 to v0.6.4)")
    if not by_labelled and problem.normalize == "valid_tokens":
        raise ks.Skip("the installed liger-kernel divides the loss by all tokens (Liger as at 08906d3d, to v0.6.4); "
                      "normalize: valid_tokens with ignored tokens needs liger-kernel 0.6.5 or later")


@ks.implementation(KERNEL, "liger", backend="cuda", packages=("liger-kernel", "torch"),
                   labels={"liger_version": "liger-kernel"}, work=liger_work,
                   help="Liger-Kernel's LigerFusedLinearCosineSimilarityFunction (chunked, torch.compile), "
                        "called as its benchmark calls it")
def make_liger(params: dict, device: str) -> ks.Instance:
    function = import_liger()
    problem = Problem.of(params)
    refuse_auto_chunks(problem)
    instance = LigerDistill(params, device, "liger", liger_loss(function))
    refuse_other_divisor(problem, instance, function)
    return instance
