"""The do_bench protocol, as src/measure/do_bench.cpp and triton.testing.do_bench run it:
  1. one call, synchronise;
  2. estimate one call from 5 calls, each preceded by the flush, timed together (flush included);
  3. n_warmup = max(1, floor(warmup_ms / estimate)), n_repeat = max(1, floor(rep_ms / estimate)),
     n_repeat raised to min_repeat and capped at max_repeat, the estimate raised to 1e-3 ms when the
     timer read less;
  4. n_warmup calls without flushing;
  5. for each repetition: flush, start mark, call, end mark; synchronise once at the end.
The loop is written once; a timer says how to mark time, flush and wait: CUDA events on the current
stream and a 256 MiB device buffer zeroed on the GPU, the monotonic clock (CLOCK_MONOTONIC, as
std::chrono::steady_clock) and a buffer the size of the last-level cache zeroed on the CPU.
"""
from __future__ import annotations

import ctypes
import math
import os
import time
from dataclasses import dataclass, field
from typing import Callable, List, Optional

GPU_FLUSH_BYTES = 256 << 20  # Triton's 256 MB L2 flush buffer
ESTIMATE_CALLS = 5
MIN_ESTIMATE_MS = 1e-3
UNKNOWN_CACHE_BYTES = 32 << 20
CPU_MIN_REPEAT = 10  # min_repeat's default on the CPU (1 on a GPU, as Triton)


@dataclass
class Protocol:
    """A protocol with every default resolved for one backend: the BenchmarkProtocol's content."""
    name: str = "do_bench"
    timer: str = "steady_clock"
    warmup_ms: float = 25.0
    rep_ms: float = 100.0
    min_repeat: int = 1
    max_repeat: int = 10000
    flush_bytes: int = 0
    quantiles: List[float] = field(default_factory=lambda: [0.5, 0.2, 0.8])
    quantile_method: str = "linear"
    primary_statistic: str = "median"
    repetitions: int = 1
    # The C++ worker reads the SM clock over each sample on a GPU; this worker does not, and its
    # protocol document says so.
    sm_clock_per_sample: bool = False

    def to_json(self) -> dict:
        return {"name": self.name, "timer": self.timer, "warmup_ms": self.warmup_ms, "rep_ms": self.rep_ms,
                "min_repeat": self.min_repeat, "max_repeat": self.max_repeat, "flush_bytes": self.flush_bytes,
                "quantiles": list(self.quantiles), "quantile_method": self.quantile_method,
                "primaryStatistic": self.primary_statistic, "repetitions": self.repetitions,
                "sm_clock_per_sample": self.sm_clock_per_sample}


def resolve_protocol(spec: dict, on_gpu: bool) -> Protocol:
    """The rank's protocol spec with the backend's defaults filled in (do_bench.cpp resolve_protocol)."""
    if spec["name"] != "do_bench":
        raise ValueError(f"protocol '{spec['name']}' is timed by the C++ worker only: the Python worker "
                         "times do_bench")
    flush = spec.get("flush_bytes")
    if flush is None:
        flush = GPU_FLUSH_BYTES if on_gpu else cpu_last_level_cache_bytes()
    min_repeat = spec.get("min_repeat")
    if min_repeat is None:
        min_repeat = 1 if on_gpu else min(CPU_MIN_REPEAT, int(spec["max_repeat"]))
    return Protocol(name=spec["name"], timer="cuda_events" if on_gpu else "steady_clock",
                    warmup_ms=float(spec["warmup_ms"]), rep_ms=float(spec["rep_ms"]), min_repeat=int(min_repeat),
                    max_repeat=int(spec["max_repeat"]), flush_bytes=int(flush), quantiles=list(spec["quantiles"]),
                    repetitions=int(spec.get("repetitions", 1)))


@dataclass
class Timing:
    n_warmup: int = 0
    n_repeat: int = 0
    estimate_ms: float = 0.0
    samples_ns: List[float] = field(default_factory=list)


def _calls_within(budget_ms: float, estimate_ms: float, cap: int) -> int:
    calls = math.floor(budget_ms / estimate_ms)
    if not calls < cap:
        return max(1, cap)
    return max(1, int(calls))


def repetition_counts(estimate_ms: float, protocol: Protocol) -> Timing:
    guarded = max(estimate_ms, MIN_ESTIMATE_MS)
    n_repeat = min(max(_calls_within(protocol.rep_ms, guarded, protocol.max_repeat), protocol.min_repeat),
                   protocol.max_repeat)
    return Timing(n_warmup=_calls_within(protocol.warmup_ms, guarded, 2**63 - 1), n_repeat=n_repeat,
                  estimate_ms=estimate_ms)


def _estimate_call_ms(run: Callable[[], object], timer) -> float:
    timer.reserve_marks(2)
    timer.record(0)
    for _ in range(ESTIMATE_CALLS):
        timer.flush()
        run()
    timer.record(1)
    timer.synchronize()
    return timer.elapsed_ns(0, 1) / 1e6 / ESTIMATE_CALLS


def _timed_repetitions(run: Callable[[], object], timer, n_repeat: int) -> List[float]:
    timer.reserve_marks(2 * n_repeat)
    for i in range(n_repeat):
        timer.flush()
        timer.record(2 * i)
        run()
        timer.record(2 * i + 1)
    timer.synchronize()
    return [timer.elapsed_ns(2 * i, 2 * i + 1) for i in range(n_repeat)]


def do_bench(run: Callable[[], object], timer, protocol: Protocol, before_timed: Optional[Callable[[], None]] = None,
             after_timed: Optional[Callable[[], None]] = None) -> Timing:
    """Times run() under `protocol` with `timer`: 1 + 5 + n_warmup + n_repeat calls in all. before_timed
    runs once the warm-up calls are submitted, after_timed once the timed repetitions have completed
    (how the GPU's state is read around them)."""
    run()  # step 1: the first call (lazy initialisation, autotuning) stays out of the estimate
    timer.synchronize()
    timing = repetition_counts(_estimate_call_ms(run, timer), protocol)
    for _ in range(timing.n_warmup):
        run()  # no flush, as in Triton
    if before_timed:
        before_timed()
    timing.samples_ns = _timed_repetitions(run, timer, timing.n_repeat)
    if after_timed:
        after_timed()
    return timing


# ---- statistics, as src/measure/statistics.cpp -------------------------------------------------

def _lerp(a: float, b: float, t: float) -> float:
    """a + t(b - a) from the nearer end, as numpy's _lerp and torch.lerp (and statistics.cpp) write it."""
    difference = b - a
    return a + difference * t if t < 0.5 else b - difference * (1 - t)


def quantile_linear(sorted_values: List[float], q: float) -> float:
    """numpy's "linear" quantile (torch.quantile's too) of sorted values."""
    if not sorted_values:
        raise ValueError("quantile_linear: no values")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile_linear: q = {q} is outside [0, 1]")
    position = (len(sorted_values) - 1) * q
    below = math.floor(position)
    above = min(below + 1, len(sorted_values) - 1)
    return _lerp(sorted_values[below], sorted_values[above], position - below)


def summarize(samples_ns: List[float]) -> List[float]:
    """[median, p20, p80, mean, min, max, stddev (divisor n - 1)], as the worker messages carry them;
    summed in sorted order, as statistics.cpp sums, so that both give the same bits."""
    if not samples_ns:
        raise ValueError("summarize: no samples")
    ordered = sorted(float(x) for x in samples_ns)
    n = len(ordered)
    total = 0.0
    for x in ordered:
        total += x
    mean = total / n
    squares = 0.0
    for x in ordered:
        squares += (x - mean) * (x - mean)
    stddev = math.sqrt(squares / (n - 1)) if n > 1 else 0.0
    return [quantile_linear(ordered, 0.5), quantile_linear(ordered, 0.2), quantile_linear(ordered, 0.8), mean,
            ordered[0], ordered[-1], stddev]


# ---- timers ------------------------------------------------------------------------------------

class SteadyClockTimer:
    """CLOCK_MONOTONIC marks (std::chrono::steady_clock on Linux); the flush is a memset of a buffer
    kept for the whole process."""
    _buffers: dict = {}

    def __init__(self, flush_bytes: int):
        self.flush_bytes = flush_bytes
        if flush_bytes > 0 and flush_bytes not in self._buffers:
            self._buffers[flush_bytes] = (ctypes.c_char * flush_bytes)()
        self._buffer = self._buffers.get(flush_bytes)
        self._marks: List[int] = []

    def reserve_marks(self, count: int) -> None:
        if len(self._marks) < count:
            self._marks.extend([0] * (count - len(self._marks)))

    def record(self, mark: int) -> None:
        self._marks[mark] = time.monotonic_ns()

    def flush(self) -> None:
        if self._buffer is not None:
            ctypes.memset(self._buffer, 0, self.flush_bytes)

    def synchronize(self) -> None:
        pass

    def elapsed_ns(self, start: int, end: int) -> float:
        return float(self._marks[end] - self._marks[start])


class CudaEventTimer:
    """CUDA event marks on the current stream; the flush zeroes a device buffer of flush_bytes,
    allocated once per process (as Triton's do_bench zeroes its cache tensor)."""
    _buffers: dict = {}

    def __init__(self, flush_bytes: int):
        import torch
        self._torch = torch
        self.flush_bytes = flush_bytes
        if flush_bytes > 0 and flush_bytes not in self._buffers:
            self._buffers[flush_bytes] = torch.empty(flush_bytes // 4, dtype=torch.int32, device="cuda")
        self._buffer = self._buffers.get(flush_bytes)
        self._events: list = []

    def reserve_marks(self, count: int) -> None:
        while len(self._events) < count:
            self._events.append(self._torch.cuda.Event(enable_timing=True))

    def record(self, mark: int) -> None:
        self._events[mark].record()

    def flush(self) -> None:
        if self._buffer is not None:
            self._buffer.zero_()

    def synchronize(self) -> None:
        self._torch.cuda.synchronize()

    def elapsed_ns(self, start: int, end: int) -> float:
        return self._events[start].elapsed_time(self._events[end]) * 1e6


def make_timer(protocol: Protocol):
    if protocol.timer == "steady_clock":
        return SteadyClockTimer(protocol.flush_bytes)
    if protocol.timer == "cuda_events":
        return CudaEventTimer(protocol.flush_bytes)
    raise ValueError(f"do_bench: unknown timer '{protocol.timer}' (steady_clock or cuda_events)")


# ---- the CPU's last-level cache, as src/measure/cpu_cache.cpp reads it ---------------------------

def _parse_cache_size(text: str) -> int:
    digits = len(text) - len(text.lstrip("0123456789"))
    if digits == 0:
        return 0
    value, unit = int(text[:digits]), text[digits:digits + 1]
    return value << {"K": 10, "M": 20, "G": 30}.get(unit, 0)


def _read_word(path: str) -> str:
    try:
        with open(path) as f:
            words = f.read().split()
        return words[0] if words else ""
    except OSError:
        return ""


_cache_bytes = None


def cpu_last_level_cache_bytes() -> int:
    """The data or unified cache of the highest level cpu0 reports, or 32 MiB when unknown."""
    global _cache_bytes
    if _cache_bytes is None:
        caches = "/sys/devices/system/cpu/cpu0/cache"
        best_level, best_bytes = 0, 0
        try:
            entries = os.listdir(caches)
        except OSError:
            entries = []
        for entry in entries:
            if not entry.startswith("index"):
                continue
            path = os.path.join(caches, entry)
            if _read_word(os.path.join(path, "type")) == "Instruction":
                continue
            try:
                level = int(_read_word(os.path.join(path, "level")) or 0)
            except ValueError:
                level = 0
            size = _parse_cache_size(_read_word(os.path.join(path, "size")))
            if size > 0 and (level > best_level or (level == best_level and size > best_bytes)):
                best_level, best_bytes = level, size
        _cache_bytes = best_bytes if best_bytes > 0 else UNKNOWN_CACHE_BYTES
    return _cache_bytes
