"""The layers between `kernelsweep run` and Liger's own script, each timed on its own, so that a
difference between the two can be placed in one of them.

    python3 bench/gpu/liger_sides.py worker   POINT_JSON MEASURES [--check]
    python3 bench/gpu/liger_sides.py instance POINT_JSON MEASURES
    python3 bench/gpu/liger_sides.py worker_native POINT_JSON MEASURES [--check]   (KERNELSWEEP_BIN set)

POINT_JSON is one point as `kernelsweep plan --json` prints it (kernel, implementation, mode,
params with every default). Each side prints "tokens median_ms" for each of its MEASURES
measurements, as liger_rounds.sh reads them:

- worker: the Python worker (`python3 -m kernelsweep.worker`) in a process of its own, handed the
  point MEASURES times over its pipes, as a rank hands it the repetitions of a point (the check
  after the first only, with --check), with no rank, no MPI and no C++ worker beside it;
- worker_native: the same, with the C++ worker (`$KERNELSWEEP_BIN worker`) started beside it and left
  idle, as a rank keeps its two workers: what the other worker's process (and its hold on the GPU)
  adds, without the rank and MPI;
- instance: kernelsweep's implementation of the point made and bound in this process, and its pass
  timed MEASURES times by triton.testing.do_bench (rep 100 ms, as Liger's script times its closure),
  with no worker, no protocol and no kernelsweep timing loop.

With `kernelsweep run` (rank, C++ worker, Python worker) and Liger's script (its own closure timed by
triton.testing.do_bench) at either end: run - worker is what the rank and the C++ worker add,
worker - instance what the worker and kernelsweep's do_bench add, instance - Liger what the
difference of the callables adds.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from kernelsweep.channel import PipeChannel

# configs/liger-distill-cosine.yaml's protocol as the rank sends it (src/cluster/worker_messages.cpp),
# the repetitions added.
PROTOCOL = {"name": "do_bench", "warmup_ms": 25, "rep_ms": 100, "max_repeat": 10000, "quantiles": [0.5, 0.2, 0.8],
            "sm_clock_per_sample": False}


def tokens_of(point: dict) -> int:
    return int(point["params"]["tokens"])


def start_worker(command: list, name: str):
    """A worker process on pipes, as a rank starts it; its hello read. Returns (process, channel)."""
    to_worker_read, to_worker_write = os.pipe()
    from_worker_read, from_worker_write = os.pipe()
    worker = subprocess.Popen(command + ["--in-fd", str(to_worker_read), "--out-fd", str(from_worker_write),
                                         "--local-rank", "0"], pass_fds=(to_worker_read, from_worker_write))
    os.close(to_worker_read)
    os.close(from_worker_write)
    channel = PipeChannel(from_worker_read, to_worker_write)
    hello = channel.receive()
    if hello is None or hello.get("problem"):
        sys.exit(f"liger_sides: the {name} worker did not start: {hello}")
    return worker, channel


def processes_on_gpu() -> str:
    """The processes holding a CUDA context on the GPUs, as nvidia-smi lists them."""
    try:
        listed = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory",
                                 "--format=csv,noheader"], capture_output=True, text=True)
    except OSError:
        return "(nvidia-smi not available)"
    return "; ".join(line.strip() for line in listed.stdout.splitlines() if line.strip()) or "none"


def worker_side(point: dict, measures: int, check: bool, native_beside: bool = False) -> None:
    native = start_worker([os.environ["KERNELSWEEP_BIN"], "worker"], "C++") if native_beside else None
    worker, channel = start_worker([sys.executable, "-m", "kernelsweep.worker"], "Python")
    protocol = dict(PROTOCOL, repetitions=measures) if measures > 1 else PROTOCOL
    request = {"type": "measure", "point": point, "protocol": protocol}
    for repetition in range(measures):
        channel.send(dict(request, check=check and repetition == 0))
        result = channel.receive()
        if result is None:
            sys.exit("liger_sides: the Python worker died")
        record = result["record"]
        if record["status"] != "passed":
            sys.exit(f"liger_sides: {record['status']}: {record['message']}")
        if repetition == 0:
            print("resolved protocol:", json.dumps(result["protocol"]), file=sys.stderr)
            print("processes on the GPU:", processes_on_gpu(), file=sys.stderr)
        print(tokens_of(point), record["median_ns"] / 1e6, flush=True)
    for process, pipes in [(worker, channel)] + ([native] if native else []):
        pipes.send({"type": "stop"})
        process.wait()


def point_of(planned: dict) -> dict:
    """A point of `kernelsweep plan --json` as a rank sends it."""
    return {key: planned[key] for key in ("kernel", "implementation", "mode", "params")}


def made_instance(point: dict):
    """kernelsweep's implementation of the point, made in this process (on the GPU where there is one)."""
    import torch

    import kernelsweep.implementations  # noqa: F401 - registers the built-in Python implementations
    from kernelsweep import api

    declared = api.registry.implementations[(point["kernel"], point["implementation"])]
    return declared.make(dict(point["params"]), "cuda" if torch.cuda.is_available() else "cpu")


def instance_side(point: dict, measures: int) -> None:
    import triton.testing

    bound = made_instance(point).bind(point["mode"])
    for _ in range(measures):
        median_ms = triton.testing.do_bench(bound.run, rep=100, quantiles=PROTOCOL["quantiles"])[0]
        print(tokens_of(point), median_ms, flush=True)


def main() -> None:
    if len(sys.argv) < 4 or sys.argv[1] not in ("worker", "worker_native", "instance"):
        sys.exit(__doc__)
    side, planned, measures = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
    point = point_of(planned)
    if side in ("worker", "worker_native"):
        worker_side(point, measures, "--check" in sys.argv[4:], native_beside=side == "worker_native")
    else:
        instance_side(point, measures)


if __name__ == "__main__":
    main()
