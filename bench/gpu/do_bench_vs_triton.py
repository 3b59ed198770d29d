"""kernelsweep's Python do_bench against triton.testing.do_bench on the same callables, on this
host's first GPU: each pair is timed alternately (ours, Triton's, ours, ...) and the medians of the
rounds' medians printed with their ratio, and the spread of the rounds' medians (max / min - 1) of
each. Where liger_kernel is importable, Liger's distill_cosine_loss full pass is timed too, as
benchmark_distill_cosine_loss.py builds it (nn.Linear layers, torch.rand inputs), with the CPU's time
to enqueue one call beside the GPU's. Run by bench/gpu/python_worker.sh and liger_benchmark.sh; needs
torch and triton.

    python3 bench/gpu/do_bench_vs_triton.py [ROUNDS]
"""
import statistics
import sys
import time

import torch
import triton

from kernelsweep.do_bench import do_bench, make_timer, resolve_protocol, summarize

PROTOCOL = resolve_protocol({"name": "do_bench", "warmup_ms": 25, "rep_ms": 100, "max_repeat": 10000,
                             "quantiles": [0.5, 0.2, 0.8]}, on_gpu=True)


def callables():
    a, b = (torch.rand(4096, 4096, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    c, d = (torch.rand(8192, 8192, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    x = torch.rand(64 << 20, device="cuda", dtype=torch.float32)
    found = {"bf16 matmul 4096^3": lambda: a @ b, "bf16 matmul 8192^3": lambda: c @ d,
             "fp32 x*2, 256 MiB": lambda: x * 2}
    try:
        from liger_kernel.chunked_loss.cosine_similarity_loss import LigerFusedLinearCosineSimilarityFunction
    except ImportError:
        return found
    for tokens in (1024, 2048):
        found[f"liger full, {tokens} tokens"] = liger_full_pass(LigerFusedLinearCosineSimilarityFunction, tokens)
    return found


def liger_full_pass(function, tokens, hidden=4096, vocab=128256):
    """benchmark_distill_cosine_loss.py's full() for the liger provider: forward and backward of the
    loss, the student's nn.Linear in_features hidden/2, every argument as the benchmark passes it."""
    student = torch.nn.Linear(hidden // 2, vocab, bias=False).to(dtype=torch.bfloat16).cuda()
    teacher = torch.nn.Linear(hidden, vocab, bias=False).to(dtype=torch.bfloat16).cuda()
    xs = torch.rand(tokens, hidden // 2, device="cuda", dtype=torch.bfloat16).requires_grad_(True)
    xt = torch.rand(tokens, hidden, device="cuda", dtype=torch.bfloat16)
    targets = torch.randint(0, vocab, (tokens,), device="cuda", dtype=torch.long)

    def full():
        loss = function.apply(xs, student.weight, xt, teacher.weight, targets, None, None, 0.5, 0.5)
        loss.backward()
    return full


def enqueue_ms(fn, calls=5):
    """The CPU's time to enqueue one call on an idle GPU, against the call's GPU time: near 1, the GPU
    waits for the CPU, and the CPU's speed shows in the measured time."""
    cpu, gpu = [], []
    for _ in range(calls):
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        began = time.perf_counter()
        start.record()
        fn()
        enqueued = time.perf_counter()
        end.record()
        torch.cuda.synchronize()
        cpu.append((enqueued - began) * 1e3)
        gpu.append(start.elapsed_time(end))
    return statistics.median(cpu), statistics.median(gpu)


def spread(values):
    return max(values) / min(values) - 1


def ours_ms(fn):
    timing = do_bench(fn, make_timer(PROTOCOL), PROTOCOL)
    return summarize(timing.samples_ns)[0] / 1e6


def tritons_ms(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, quantiles=[0.5, 0.2, 0.8])[0]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(f"do_bench, kernelsweep (Python worker) vs triton {triton.__version__}, torch {torch.__version__}, "
          f"{torch.cuda.get_device_name(0)}; {rounds} alternating rounds, medians of each round's median")
    print(f"{'callable':<24} {'kernelsweep ms':>15} {'triton ms':>12} {'ratio':>8} {'spread ours':>12} "
          f"{'spread triton':>14}")
    found, rounds_of = callables(), {}
    for name, fn in found.items():
        ours, theirs = rounds_of.setdefault(name, ([], []))
        for _ in range(rounds):
            ours.append(ours_ms(fn))
            theirs.append(tritons_ms(fn))
        a, b = statistics.median(ours), statistics.median(theirs)
        print(f"{name:<24} {a:>15.4f} {b:>12.4f} {a / b:>8.4f} {spread(ours):>11.1%} {spread(theirs):>13.1%}")
    for name, fn in found.items():
        if name.startswith("liger"):
            cpu, gpu = enqueue_ms(fn)
            print(f"{name}: the CPU enqueues a call in {cpu:.3f} ms, the GPU runs it in {gpu:.3f} ms")
    for name, (ours, theirs) in rounds_of.items():
        if name.startswith("liger"):
            print(f"{name}, each round's median: kernelsweep " + " ".join(f"{v:.3f}" for v in ours)
                  + ", triton " + " ".join(f"{v:.3f}" for v in theirs))


if __name__ == "__main__":
    main()
