#!/usr/bin/python3
"""Makes the corpus of damaged results files that the readers' test gives to `status`, `show` and
`run --resume` (tests/mpi/stored_files_test.cpp, DamagedFiles.EveryReaderRefusesEveryFileOfTheCorpus).

    tests/data/damaged/make_corpus.py KERNELSWEEP

Measures sweep.yaml (12 points of the built-in noop kernel) into a sound results file, then damages
copies of it: cut short, its signature broken, and single bytes flipped at 400 offsets spread over
the bytes that hold something. A copy joins the corpus when all three commands refuse it (a non-zero
exit with a message, no signal, within 60 s), one copy per distinct first reason, so the corpus spans
the checks: HDF5's own errors, the chunks' checksums, the strings' checksums, the tables' types, rows
that contradict the file. Copies are kept gzipped (the files are mostly unused space), named by
their damage. It also counts the copies `status` reads without a complaint, and how many of those
`show` prints as it prints the sound file. Run it again when the layout of the results file changes.
"""
import gzip
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
COMMANDS = ("status", "show", "resume")


def run(kernelsweep, command, path, folder):
    if command == "resume":
        argv = [kernelsweep, "run", os.path.join(HERE, "sweep.yaml"), "--output-dir", folder, "--results-file", path,
                "--resume"]
    else:
        argv = [kernelsweep, command, path]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=60)
    except subprocess.TimeoutExpired:
        return None
    return done


def reason(message, path):
    """The refusal's kind: its text without the file's name, numbers and offsets."""
    text = message.replace(path, "FILE")
    text = re.sub(r'"[^"]*"', '"S"', text)
    text = re.sub(r"0x[0-9a-f]+|\d+", "N", text)
    return text[:140]


def shown(kernelsweep, path):
    """`show`'s table of the file, its name left out."""
    return subprocess.run([kernelsweep, "show", path, "--format", "json"], capture_output=True, text=True,
                          errors="replace", timeout=60).stdout.replace(path, "FILE")


def refused_by_all(kernelsweep, path, folder, read):
    reasons = []
    for command in COMMANDS:
        done = run(kernelsweep, command, path, folder)
        if done is not None and done.returncode == 0 and command == "status":
            read.append(shown(kernelsweep, path))
        if done is None or done.returncode <= 0:
            return None
        lines = [line for line in done.stderr.splitlines() if line.startswith("kernelsweep")]
        if not lines:
            return None
        reasons.append(reason(lines[-1], path))
    return reasons[0]


def main():
    kernelsweep = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as folder:
        sound_path = os.path.join(folder, "corpus.h5")
        subprocess.run([kernelsweep, "run", os.path.join(HERE, "sweep.yaml"), "--output-dir", folder,
                        "--kernelindex-format", "jsonl"], check=True, capture_output=True)
        sound = open(sound_path, "rb").read()
        sound_shown = shown(kernelsweep, sound_path)
        candidates = [("cut-at-half", sound[:len(sound) // 2]), ("cut-at-4096", sound[:4096]),
                      ("signature-broken", b"\x00" + sound[1:])]
        # Bytes that hold something (most of the file is space allocated and unused), 400 of them spread
        # over the file.
        used = [at for at in range(8, len(sound)) if sound[at] != 0]
        for at in used[::max(1, len(used) // 400)]:
            flipped = bytearray(sound)
            flipped[at] ^= 0x5A
            candidates.append((f"byte-{at:06x}-flipped", bytes(flipped)))
        for old in os.listdir(HERE):
            if old.endswith(".h5.gz"):
                os.remove(os.path.join(HERE, old))
        kept, read = {}, []
        copy = os.path.join(folder, "damaged.h5")
        for name, data in candidates:
            with open(copy, "wb") as out:
                out.write(data)
            why = refused_by_all(kernelsweep, copy, folder, read)
            if why is None or why in kept.values():
                continue
            kept[name] = why
            with open(os.path.join(HERE, name + ".h5.gz"), "wb") as raw, \
                    gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as out:
                out.write(data)
            print(f"{name}: {why}")
        print(f"{len(kept)} files kept of {len(candidates)} damaged copies; `status` read {len(read)} copies "
              f"without a complaint, and `show` printed the sound file's table for "
              f"{sum(table == sound_shown for table in read)} of them")


if __name__ == "__main__":
    main()
