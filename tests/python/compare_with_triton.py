"""Times one callable (a bf16 4096³ matmul on the GPU) with kernelsweep's Python do_bench and with
triton.testing.do_bench, alternately, and prints what each did as JSON: the medians (ms) and the
number of calls each made. tests/gpu/python_gpu_test.cpp holds the two against each other."""
import json
import statistics

import torch
import triton

from kernelsweep.do_bench import do_bench, make_timer, resolve_protocol, summarize


def main():
    a = torch.rand(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.rand(4096, 4096, device="cuda", dtype=torch.bfloat16)
    calls = {"n": 0}

    def matmul():
        calls["n"] += 1
        return a @ b

    protocol = resolve_protocol({"name": "do_bench", "warmup_ms": 25, "rep_ms": 100, "max_repeat": 10000,
                                 "quantiles": [0.5, 0.2, 0.8]}, on_gpu=True)
    ours, theirs, our_calls, their_calls = [], [], [], []
    for _ in range(3):
        calls["n"] = 0
        timing = do_bench(matmul, make_timer(protocol), protocol)
        ours.append(summarize(timing.samples_ns)[0] / 1e6)
        our_calls.append(calls["n"])
        calls["n"] = 0
        theirs.append(triton.testing.do_bench(matmul, warmup=25, rep=100, quantiles=[0.5, 0.2, 0.8])[0])
        their_calls.append(calls["n"])
    print(json.dumps({"ours_ms": statistics.median(ours), "triton_ms": statistics.median(theirs),
                      "our_calls": statistics.median(our_calls), "their_calls": statistics.median(their_calls),
                      "triton": triton.__version__}))


if __name__ == "__main__":
    main()
