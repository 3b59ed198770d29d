"""How a bf16 8192³ product's time moves while do_bench repeats it, for torch.matmul timed by
triton.testing.do_bench and for kernelsweep's measurement of the same product (its raw samples in
the results file). Prints, per measurement, the median, p20, p80 and the medians of the first and
the last quarter of the repetitions in the order they ran: a GPU that starts cool and slows down
under a power-bound product shows a first quarter faster than the last.
  python3 gemm_ramp.py torch [SIZE]            # times torch.matmul twice, inputs as kernelsweep's gemm
  python3 gemm_ramp.py h5 RESULTS.h5 [LABEL]   # every passed run in a kernelsweep results file"""
import json
import sys

import numpy as np


def summary(label, samples_ms):
    s = np.asarray(samples_ms, dtype=float)
    q = max(1, len(s) // 4)
    return {"what": label, "n": len(s), "median_ms": round(float(np.median(s)), 4),
            "p20_ms": round(float(np.quantile(s, 0.2)), 4), "p80_ms": round(float(np.quantile(s, 0.8)), 4),
            "first_quarter_ms": round(float(np.median(s[:q])), 4), "last_quarter_ms": round(float(np.median(s[-q:])), 4)}


def time_torch(size):
    import torch
    from triton.testing import do_bench
    a = (torch.rand(size, size, device="cuda", dtype=torch.float32) * 2 - 1).to(torch.bfloat16)
    b = (torch.rand(size, size, device="cuda", dtype=torch.float32) * 2 - 1).to(torch.bfloat16)
    # Twice in a row: the first call starts from the clocks the GPU had (its estimate of one call, and
    # so its repetition count, can include the clock ramp from idle); the second starts from the
    # state the first left, as a kernelsweep point starts after its setup and first calls.
    for start in ("first call", "second call"):
        times = do_bench(lambda: torch.matmul(a, b), warmup=25, rep=100, return_mode="all")
        print(json.dumps(summary(f"torch.matmul {size}^3 bf16, {start}", times)), flush=True)


def read_h5(path, label):
    import h5py
    with h5py.File(path, "r") as f:
        samples = f["samples"]
        for run in f["runs"][:]:
            if run["status"].decode() != "passed":
                continue
            start, count = int(run["samples_offset"]), int(run["samples_count"])
            raw_ns = samples[start:start + count]
            print(json.dumps(summary(f"kernelsweep {label} {run['implementation'].decode()}", raw_ns / 1e6)), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "torch":
        time_torch(int(sys.argv[2]) if len(sys.argv) > 2 else 8192)
    else:
        read_h5(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "")
