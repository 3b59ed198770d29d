"""Liger's full pass at one point, timed in one process in alternating turns: Liger's own closure (as
benchmark_distill_cosine_loss.py builds it) against kernelsweep's `liger` instance of the same point,
each by triton.testing.do_bench, and the instance by kernelsweep's do_bench too. Where the pass is
bound by the host CPU (1024 tokens on an H200 host), the host's speed moves from process to process
and from second to second (liger_host_bound.py); turns a fraction of a second apart in one process
see the same host, so the ratio of two callables within a turn tells their difference to a percent
that a comparison across processes needs hundreds of rounds for.

    python3 bench/gpu/liger_paired.py POINT_JSON TURNS

POINT_JSON: the point as `kernelsweep plan --json` prints it (liger, full, inputs torch_rand). Needs
torch, triton, liger_kernel and Liger's benchmark/scripts on PYTHONPATH (liger_rounds.sh sets it).
Each turn times every side once, the order turning by one each turn; printed: each turn's medians,
then each side's median over the turns and the median of its ratio to Liger's closure within a
turn, with a 95% interval resampling the turns.

Sides:
  liger            Liger's closure: LigerCosineSimilarityLoss (nn.Linear weights, parameters) called
                   on torch.rand inputs, then backward, timed by triton.testing.do_bench (rep 100 ms);
  instance         kernelsweep's instance of the point, its `full` pass, by triton.testing.do_bench;
  instance_params  the same with the weights made nn.Parameter, as Liger's closure holds them;
  kernelsweep      kernelsweep's instance by kernelsweep's do_bench (the Python worker's loop).
"""
from __future__ import annotations

import json
import random
import statistics
import sys

import torch
import triton.testing

from kernelsweep.do_bench import do_bench, make_timer, resolve_protocol
from liger_sides import made_instance, point_of

QUANTILES = [0.5, 0.2, 0.8]
PROTOCOL = resolve_protocol({"name": "do_bench", "warmup_ms": 25, "rep_ms": 100, "max_repeat": 10000,
                             "quantiles": QUANTILES}, on_gpu=True)


def liger_closure(params: dict):
    """bench_speed_cosine_similarity_loss's full() for provider liger, built as the script builds it."""
    from benchmark_distill_cosine_loss import LigerCosineSimilarityLoss

    tokens, hidden, vocab = int(params["tokens"]), int(params["hidden"]), int(params["vocab"])
    loss = LigerCosineSimilarityLoss(H=hidden, V=vocab, dtype=torch.bfloat16, ignore_index=int(params["ignore_index"]),
                                     bias=bool(params["bias"]), weight_hard_loss=float(params["weight_hard_loss"]),
                                     weight_soft_loss=float(params["weight_soft_loss"])).to("cuda")
    student = torch.rand(tokens, hidden // 2, device="cuda", dtype=torch.bfloat16).requires_grad_(True)
    teacher = torch.rand(tokens, hidden, device="cuda", dtype=torch.bfloat16)
    target = torch.randint(0, vocab, (tokens,), device="cuda", dtype=torch.long)

    def full():
        y = loss(student, teacher, target)
        y.backward()
    return full


def instance_pass(point: dict, parameters: bool):
    instance = made_instance(point)
    if parameters:
        tensors = instance.tensors
        tensors.ws, tensors.wt = torch.nn.Parameter(tensors.ws), torch.nn.Parameter(tensors.wt)
    return instance.bind(point["mode"]).run


def timed_by_triton(fn):
    return lambda: triton.testing.do_bench(fn, rep=100, quantiles=QUANTILES)[0]


def timed_by_kernelsweep(fn):
    timer = make_timer(PROTOCOL)
    return lambda: statistics.median(do_bench(fn, timer, PROTOCOL).samples_ns) / 1e6


def interval(ratios_by_turn: list, generator: random.Random) -> tuple:
    medians = sorted(statistics.median(generator.choices(ratios_by_turn, k=len(ratios_by_turn))) for _ in range(2000))
    return medians[50], medians[1949]


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    planned, turns = json.loads(sys.argv[1]), int(sys.argv[2])
    point = point_of(planned)
    instance = instance_pass(point, parameters=False)
    sides = {"liger": timed_by_triton(liger_closure(point["params"])),
             "instance": timed_by_triton(instance),
             "instance_params": timed_by_triton(instance_pass(point, parameters=True)),
             "kernelsweep": timed_by_kernelsweep(instance)}
    names = list(sides)
    for name in names:
        sides[name]()  # compiles and warms each side before the first turn
    measured = {name: [] for name in names}
    print("turn " + " ".join(f"{name:>15}" for name in names))
    for turn in range(turns):
        for i in range(len(names)):
            name = names[(i + turn) % len(names)]
            measured[name].append(sides[name]())
        print(f"{turn + 1:>4} " + " ".join(f"{measured[name][-1]:>15.3f}" for name in names), flush=True)
    generator = random.Random(1)
    print(f"tokens {point['params']['tokens']}, {turns} turns: median ms over the turns; ratio to Liger's closure "
          "within a turn, its median and 95% interval resampling the turns")
    for name in names:
        ratios = [a / b for a, b in zip(measured[name], measured["liger"])]
        low, high = interval(ratios, generator)
        print(f"{name:<16} {statistics.median(measured[name]):8.3f}  ratio {statistics.median(ratios):.4f} "
              f"({low:.4f} to {high:.4f})")
    frames = getattr(getattr(getattr(torch, "_dynamo", None), "utils", None), "counters", {}).get("frames", {})
    print("torch.compile frames:", dict(frames))


if __name__ == "__main__":
    main()
