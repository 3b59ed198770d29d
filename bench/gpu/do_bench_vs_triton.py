"""kernelsweep's Python do_bench against triton.testing.do_bench on the same callables, on this
host's first GPU: each pair is timed alternately (ours, Triton's, ours, ...) and the medians printed
with their ratio. Run by bench/gpu/python_liger.sh; needs torch and triton.

    python3 bench/gpu/do_bench_vs_triton.py [ROUNDS]
"""
import statistics
import sys

import torch
import triton

from kernelsweep.do_bench import do_bench, make_timer, resolve_protocol, summarize

PROTOCOL = resolve_protocol({"name": "do_bench", "warmup_ms": 25, "rep_ms": 100, "max_repeat": 10000,
                             "quantiles": [0.5, 0.2, 0.8]}, on_gpu=True)


def callables():
    a, b = (torch.rand(4096, 4096, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    c, d = (torch.rand(8192, 8192, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    x = torch.rand(64 << 20, device="cuda", dtype=torch.float32)
    return {"bf16 matmul 4096^3": lambda: a @ b, "bf16 matmul 8192^3": lambda: c @ d,
            "fp32 x*2, 256 MiB": lambda: x * 2}


def ours_ms(fn):
    timing = do_bench(fn, make_timer(PROTOCOL), PROTOCOL)
    return summarize(timing.samples_ns)[0] / 1e6


def tritons_ms(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, quantiles=[0.5, 0.2, 0.8])[0]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(f"do_bench, kernelsweep (Python worker) vs triton {triton.__version__}, torch {torch.__version__}, "
          f"{torch.cuda.get_device_name(0)}; {rounds} alternating rounds, medians of each round's median")
    print(f"{'callable':<22} {'kernelsweep ms':>15} {'triton ms':>12} {'ratio':>8}")
    for name, fn in callables().items():
        ours, theirs = [], []
        for _ in range(rounds):
            ours.append(ours_ms(fn))
            theirs.append(tritons_ms(fn))
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"{name:<22} {a:>15.4f} {b:>12.4f} {a / b:>8.4f}")


if __name__ == "__main__":
    main()
