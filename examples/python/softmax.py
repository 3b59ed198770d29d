"""A kernel declared entirely in Python: row softmax, a Triton implementation and a torch one, each
checked against a float64 torch reference. Sweep it with softmax.yaml beside this file:

    kernelsweep run examples/python/softmax.yaml

Copy this file to start your own: declare the kernel (parameters, modes, work), then one factory per
implementation that sets a point up and returns what the timing loop calls.
"""
import functools

import torch

import kernelsweep as ks

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
ELEMENT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}

ks.kernel(
    "softmax",
    title="Row softmax",
    description="y = softmax(x) along the last dimension of a rows × cols matrix",
    parameters=[
        ks.integer("rows", 4096, "rows of x", min=1),
        ks.integer("cols", 1024, "columns of x (the softmax dimension)", min=1, max=65536),
        ks.choice("dtype", "fp32", list(DTYPES), "element type of x and y"),
        ks.integer("seed", 0, "seed of torch's generator for x", min=0),
    ],
    modes=["forward"],
    # Per element: a max, a subtraction, an exponential, a sum and a division; x read, y written.
    work=lambda p, mode: ks.Work(flops=5.0 * p["rows"] * p["cols"],
                                 bytes=2.0 * p["rows"] * p["cols"] * ELEMENT_BYTES[p["dtype"]]),
)


def make_input(params, device):
    generator = torch.Generator(device="cpu").manual_seed(params["seed"])
    x = torch.randn(params["rows"], params["cols"], generator=generator, dtype=torch.float32)
    return x.to(device=device, dtype=DTYPES[params["dtype"]])


def checked(x, run):
    """A check of run()'s output against softmax in float64."""
    tolerance = {torch.float32: 1e-5, torch.bfloat16: 1e-2, torch.float16: 2e-3}[x.dtype]

    def check():
        got = run().double()
        expected = torch.softmax(x.double(), dim=-1)
        worst = (got - expected).abs().max().item()
        return ks.Check(worst <= tolerance, f"softmax {tuple(x.shape)} {x.dtype}: worst |error| {worst:.3e} "
                                            f"(tolerance {tolerance:.0e}) against float64 torch")

    return check


@ks.implementation("softmax", "torch", backend="any", help="torch.softmax")
def make_torch(params, device):
    x = make_input(params, device)
    run = functools.partial(torch.softmax, x, dim=-1)
    return ks.Instance(run=run, check=checked(x, run))


@functools.lru_cache(maxsize=None)
def triton_softmax_kernel():
    """The Triton kernel, compiled on first use: a module that imports without triton stays
    describable (and its torch implementation sweepable) where triton is missing."""
    import triton
    import triton.language as tl

    @triton.jit
    def softmax_rows(y_ptr, x_ptr, cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offsets = tl.arange(0, BLOCK)
        mask = offsets < cols
        x = tl.load(x_ptr + row * cols + offsets, mask=mask, other=-float("inf")).to(tl.float32)
        e = tl.exp(x - tl.max(x, axis=0))
        y = e / tl.sum(e, axis=0)
        tl.store(y_ptr + row * cols + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)

    return softmax_rows, triton.next_power_of_2


@ks.implementation("softmax", "triton", backend="cuda", help="one Triton program per row")
def make_triton(params, device):
    try:
        kernel, next_power_of_2 = triton_softmax_kernel()
    except ImportError as error:
        raise ks.Skip(f"triton is not importable: {error}")
    x = make_input(params, device)
    y = torch.empty_like(x)
    block = next_power_of_2(params["cols"])

    def run():
        kernel[(params["rows"],)](y, x, params["cols"], BLOCK=block)
        return y

    return ks.Instance(run=run, check=checked(x, run), device_bytes=2 * x.numel() * x.element_size())
