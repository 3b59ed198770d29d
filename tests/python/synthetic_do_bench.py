"""Runs kernelsweep's Python do_bench loop on a synthetic clock and prints what it measured, as JSON:
the C++ test (tests/unit/python_worker_test.cpp) runs the C++ loop on the same clock and compares.

The clock moves only when the loop does something: a call takes durations[i % len] ns (i counts
calls), a flush takes flush_ns. Usage: synthetic_do_bench.py '{"protocol": {...}, "durations": [...],
"flush_ns": N, "samples": [...]}'.
"""
import json
import sys

from kernelsweep.do_bench import Protocol, do_bench, summarize


class SyntheticTimer:
    def __init__(self, durations, flush_ns):
        self.durations, self.flush_ns = durations, flush_ns
        self.now, self.calls, self.marks = 0, 0, []

    def run(self):
        self.now += self.durations[self.calls % len(self.durations)]
        self.calls += 1

    def reserve_marks(self, count):
        self.marks.extend([0] * max(0, count - len(self.marks)))

    def record(self, mark):
        self.marks[mark] = self.now

    def flush(self):
        self.now += self.flush_ns

    def synchronize(self):
        pass

    def elapsed_ns(self, start, end):
        return float(self.marks[end] - self.marks[start])


def main():
    request = json.loads(sys.argv[1])
    timer = SyntheticTimer(request["durations"], request["flush_ns"])
    timing = do_bench(timer.run, timer, Protocol(**request["protocol"]))
    json.dump({"n_warmup": timing.n_warmup, "n_repeat": timing.n_repeat, "calls": timer.calls,
               "samples": timing.samples_ns, "statistics": summarize(timing.samples_ns),
               "statistics_of_given": summarize(request["samples"])}, sys.stdout)


if __name__ == "__main__":
    main()
