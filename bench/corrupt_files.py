#!/usr/bin/python3
"""Damaged results files against kernelsweep's readers: how many crash, hang, are refused or read.

    bench/corrupt_files.py KERNELSWEEP [COPIES=200] [SEED=1]

Measures a small sweep of the built-in noop kernel into a results file (about 2,000 points), then
makes COPIES damaged copies of it: a flipped bit (half of them within the first 64 KiB, where most
of HDF5's metadata lives), a zeroed run of up to 4 KiB, or a truncation. Each copy is given to
`status`, `show` and `run --resume`, each with a 60 s limit. Prints one line per outcome and
command; figures: bench/results/reliability-cpu2.md.

Outcomes: "refused" (exit 2 or 1 with the "is damaged" message), "error" (another non-zero exit with
a message), "read" (exit 0: the damage lay where nothing reads it, such as unused space or a sample's
low bits), "crash" (killed by a signal), "hang" (past 60 s). The goal is no crash and no hang.
"""
import collections
import os
import random
import subprocess
import sys
import tempfile

SWEEP = """name: corrupt
protocol: {warmup_ms: 0.1, rep_ms: 0.2, max_repeat: 5, flush_bytes: 0}
kernels:
  - kernel: noop
    grid: {id: {from: 1, to: 2000, step: 1}}
"""


def damage(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    b = bytearray(data)
    kind = rng.choice(["flip", "flip", "zero", "truncate"])
    if kind == "flip":
        pos = rng.randrange(len(b)) if rng.random() < 0.5 else rng.randrange(min(len(b), 65536))
        b[pos] ^= 1 << rng.randrange(8)
    elif kind == "zero":
        pos = rng.randrange(len(b))
        length = rng.randrange(1, 4097)
        b[pos:pos + length] = bytes(len(b[pos:pos + length]))
    else:
        b = b[:rng.randrange(len(b))]
    return kind, bytes(b)


def outcome(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, timeout=60, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        return "hang"
    if done.returncode < 0:
        return "crash"
    if done.returncode == 0:
        return "read"
    return "refused" if "is damaged" in done.stderr else "error"


def main() -> None:
    kernelsweep = os.path.abspath(sys.argv[1])
    copies = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    with tempfile.TemporaryDirectory(prefix="kernelsweep-corrupt-") as work:
        sweep = os.path.join(work, "corrupt.yaml")
        with open(sweep, "w") as out:
            out.write(SWEEP)
        subprocess.run([kernelsweep, "run", sweep, "--output-dir", os.path.join(work, "sound")], check=True,
                       capture_output=True)
        with open(os.path.join(work, "sound", "corrupt.h5"), "rb") as sound:
            data = sound.read()
        print(f"sound file: {len(data)} bytes; {copies} damaged copies")
        counts = collections.Counter()
        for i in range(copies):
            kind, damaged = damage(data, rng)
            folder = os.path.join(work, f"copy{i}")
            os.makedirs(folder)
            path = os.path.join(folder, "corrupt.h5")
            with open(path, "wb") as out:
                out.write(damaged)
            for name, command in [("status", [kernelsweep, "status", path]),
                                  ("show", [kernelsweep, "show", path, "--format", "csv"]),
                                  ("run --resume", [kernelsweep, "run", sweep, "--output-dir", folder, "--resume"])]:
                counts[(name, kind, outcome(command))] += 1
        for (name, kind, result), count in sorted(counts.items()):
            print(f"{name:13} {kind:9} {result:8} {count}")
        for bad in ("crash", "hang"):
            print(f"{bad}: {sum(c for (n, k, r), c in counts.items() if r == bad)}")


if __name__ == "__main__":
    main()
