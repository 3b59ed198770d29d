"""The Python worker: `python3 -m kernelsweep.worker --in-fd 3 --out-fd 4 --local-rank N [--module M]...`.

It speaks the pipe protocol of `kernelsweep worker` (docs/worker-protocol.md): a hello, then one
result per measure request, until a stop or the end of its input. A rank starts it for the points of
Python implementations and handles it exactly as the C++ worker: a point that kills the interpreter
is recorded `crashed`, one that overruns its timeout `timeout`, and a fresh worker takes the next.
"""
from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import math
import os
import platform
import signal
import socket
import sys
import traceback
from datetime import datetime, timezone
from typing import Optional

from . import api, gpu_state
from .channel import PipeChannel
from .do_bench import CudaEventTimer, do_bench, make_timer, resolve_protocol, summarize

BUILTIN_IMPLEMENTATIONS = "kernelsweep.implementations"

# The fields of a result's record, in the order of src/cluster/run_record.h: every one is sent.
RECORD_FIELDS = ("point_id", "kernel", "implementation", "mode", "params", "status", "message", "rank", "host",
                 "gpu_uuid", "started_at", "ended_at", "n_warmup", "n_repeat", "median_ns", "p20_ns", "p80_ns",
                 "mean_ns", "min_ns", "max_ns", "stddev_ns", "flops", "bytes", "tflops", "gbps",
                 "device_peak_bytes")
STATISTICS = ("median_ns", "p20_ns", "p80_ns", "mean_ns", "min_ns", "max_ns", "stddev_ns")


def utc_now() -> str:
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def empty_record() -> dict:
    record = {name: "" for name in RECORD_FIELDS}
    for name in STATISTICS + ("flops", "bytes", "tflops", "gbps"):
        record[name] = math.nan
    record.update(rank=0, n_warmup=0, n_repeat=0, device_peak_bytes=0, samples_ns=[])
    return record


def last_line(error: BaseException) -> str:
    """The exception as Python's traceback ends: "Type: message", on one line."""
    text = "".join(traceback.format_exception_only(type(error), error)).strip().splitlines()
    return text[-1] if text else type(error).__name__


def _torch():
    try:
        import torch
        return torch
    except Exception:  # noqa: BLE001 - a worker without torch still runs CPU implementations
        return None


def _version_of(distribution: str) -> str:
    from importlib import metadata
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return ""


def python_facts(torch) -> dict:
    """What the environment document records of the interpreter and its packages."""
    facts = {"implementation": platform.python_implementation(), "version": platform.python_version(),
             "executable": sys.executable, "torch": "", "triton": "", "cuda_runtime": ""}
    if torch is not None:
        facts["torch"] = torch.__version__
        facts["cuda_runtime"] = torch.version.cuda or ""
    facts["triton"] = _version_of("triton")
    return facts


def _driver_version() -> str:
    try:
        with open("/proc/driver/nvidia/version") as f:
            for word in f.readline().split():
                if word[:1].isdigit() and "." in word:
                    return word
    except OSError:
        pass
    return ""


def gpu_facts(torch, ordinal: int) -> dict:
    props = torch.cuda.get_device_properties(ordinal)
    uuid = str(getattr(props, "uuid", "") or "")
    if uuid and not uuid.startswith("GPU-"):
        uuid = "GPU-" + uuid
    bus = ""
    if hasattr(props, "pci_bus_id"):
        bus = f"{getattr(props, 'pci_domain_id', 0):08x}:{props.pci_bus_id:02x}:{getattr(props, 'pci_device_id', 0):02x}.0"
    return {"index": ordinal, "name": props.name, "uuid": uuid, "pci_bus_id": bus.upper(),
            "architecture": f"sm_{props.major}{props.minor}", "memory_bytes": int(props.total_memory),
            "multiprocessors": int(props.multi_processor_count), "driver_version": _driver_version(),
            "cuda_driver_version": "", "cuda_runtime_version": torch.version.cuda or "", "cublas_version": "",
            "nccl_version": ""}


def host_facts() -> dict:
    return {"hostname": socket.gethostname(), "cpu_vendor": "", "cpu_model": platform.processor(),
            "cpu_cores": os.cpu_count() or 0, "architecture": platform.machine(), "os": "", "mpi_version": ""}


def source_facts(module_name: str) -> dict:
    """The module an implementation comes from: its name, source file and the file's SHA-256."""
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None) or ""
    digest = ""
    if path:
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    return {"module": module_name, "source": os.path.abspath(path) if path else "", "sha256": digest}


class Worker:
    def __init__(self, channel: PipeChannel, local_rank: int, modules: list):
        self.channel = channel
        self.local_rank = local_rank
        self.torch = _torch()
        self.gpu_count = 0
        self.gpu_uuid, self.gpu_state_opened, self.gpu_state = "", False, None
        self.module_errors = {}  # module -> why it could not be imported
        self.instance = None
        self.instance_key = None
        self.provenances = {}  # (kernel, implementation) -> what the implementation document records
        self._import(modules)

    def _import(self, modules: list) -> None:
        for name in [BUILTIN_IMPLEMENTATIONS] + list(modules):
            try:
                importlib.import_module(name)
            except BaseException as error:  # noqa: BLE001 - its points say why; the others still run
                self.module_errors[name] = last_line(error)

    def hello(self) -> dict:
        problem, gpu = "", gpu_facts_empty()
        torch = self.torch
        if torch is not None and torch.cuda.is_available():
            self.gpu_count = torch.cuda.device_count()
            ordinal = self.local_rank % self.gpu_count
            try:
                torch.cuda.set_device(ordinal)
                gpu = gpu_facts(torch, ordinal)
                self.gpu_uuid = gpu["uuid"]
            except Exception as error:  # noqa: BLE001
                problem, self.gpu_count = last_line(error), 0
        return {"type": "hello", "gpu_count": self.gpu_count, "gpu": gpu, "host": host_facts(), "problem": problem,
                "python": python_facts(torch)}

    def serve(self) -> int:
        if not self.channel.send(self.hello()):
            return 0
        while True:
            message = self.channel.receive()
            if message is None or message.get("type") == "stop":
                return 0
            if message.get("type") == "release":
                self.drop_instance(free_device=True)
                continue
            result = self.measure(message)
            if not self.channel.send(result) or result["worker_exits"]:
                return 0

    # ---- one point ---------------------------------------------------------------------------

    def measure(self, request: dict) -> dict:
        point = request["point"]
        record = empty_record()
        record["started_at"] = utc_now()
        result = {"type": "result", "record": record, "protocol": None, "worker_exits": False,
                  "implementation": None}
        declared = api.registry.implementations.get((point["kernel"], point["implementation"]))
        if declared is None:
            self._unknown(point, record)
        else:
            result["implementation"] = self.provenance(declared)
            device = self.device_for(declared)
            if device is None:
                record["status"], record["message"] = "skipped", "no GPU visible to this worker"
            else:
                self.time_and_check(declared, device, request, result)
        record["ended_at"] = utc_now()
        return result

    def _unknown(self, point: dict, record: dict) -> None:
        record["status"] = "error"
        record["message"] = f"the Python worker does not know {point['kernel']}/{point['implementation']}"
        if self.module_errors:
            record["message"] += "; modules that failed to import: " + "; ".join(
                f"{name}: {why}" for name, why in self.module_errors.items())

    def device_for(self, declared) -> Optional[str]:
        if declared.backend == "cpu":
            return "cpu"
        if self.gpu_count > 0:
            return "cuda"
        return "cpu" if declared.backend == "any" else None

    def provenance(self, declared) -> dict:
        """Read once per implementation: hashing the source and asking for package versions take
        milliseconds, which a sweep of short points would pay on each."""
        key = (declared.kernel, declared.name)
        if key not in self.provenances:
            facts = source_facts(declared.module)
            facts["packages"] = {name: _version_of(name) for name in declared.packages}
            facts["labels"] = {label: _version_of(package) for label, package in declared.labels.items()}
            self.provenances[key] = facts
        return self.provenances[key]

    def instance_for(self, declared, point: dict, device: str):
        """The instance of the point's shape: made once and kept while the next points have the same
        shape (its other modes)."""
        key = (point["kernel"], point["implementation"], repr(sorted(point["params"].items())), device)
        if self.instance is None or key != self.instance_key:
            self.drop_instance()
            forget_compiled_shapes()
            self.instance = declared.make(dict(point["params"]), device)
            self.instance_key = key
        return self.instance

    def gpu_state_reader(self):
        """NVML's reader of this worker's GPU, opened at its first GPU point; None where NVML is missing
        (the point is measured all the same, its GPU state not recorded)."""
        if not self.gpu_state_opened:
            self.gpu_state_opened = True
            self.gpu_state = gpu_state.open_reader(self.gpu_uuid)
        return self.gpu_state

    def drop_instance(self, free_device: bool = False) -> None:
        """Lets go of the last shape's instance. With free_device (the rank's other worker is about to
        measure, or a point failed), tensors held in reference cycles are collected and torch's cached
        device memory goes back to the device too: a full collection costs tens of milliseconds with
        torch loaded, more than a short point, so it is not done between the points of one worker."""
        self.instance, self.instance_key = None, None
        if free_device and self.torch is not None and self.gpu_count > 0:
            gc.collect()
            self.torch.cuda.empty_cache()

    def time_and_check(self, declared, device: str, request: dict, result: dict) -> None:
        point, record = request["point"], result["record"]
        on_gpu = device == "cuda"
        try:
            protocol = resolve_protocol(request["protocol"], on_gpu)
            result["protocol"] = protocol.to_json()
            timer = make_timer(protocol)  # before the memory baseline: the flush buffer is not the point's
            memory = DeviceMemory(self.torch if on_gpu else None)
            instance = self.instance_for(declared, point, device)
            bound = instance.bind(point["mode"])
            reader, states = self.gpu_state_reader() if on_gpu else None, []
            read = (lambda: states.append(reader.read())) if reader else None
            timing = do_bench(bound.run, timer, protocol, before_timed=read, after_timed=read)
            if len(states) == 2:
                record.update(gpu_state.record_fields(*states))
            record["n_warmup"], record["n_repeat"] = timing.n_warmup, timing.n_repeat
            record.update(zip(STATISTICS, summarize(timing.samples_ns)))
            record["samples_ns"] = timing.samples_ns
            self.put_work(point, declared, record)
            record["status"] = "passed"
            if request.get("check", True) and bound.check is not None:
                check = bound.check()
                forget_compiled_shapes()  # a check at another shape must not change how the next mode runs
                record["message"] = check.detail
                if not check.passed:
                    record["status"] = "failed"
            if on_gpu:
                record["device_peak_bytes"] = max(memory.peak(), int(instance.device_bytes() or 0))
        except api.Skip as skip:
            record["status"], record["message"] = "skipped", str(skip)
            self.drop_instance(free_device=True)
        except ImportError as error:
            # A package the implementation imports when it sets a point up is missing here: its points
            # cannot run on this machine, which is no error of theirs.
            missing = getattr(error, "name", None) or "a package"
            record["status"], record["message"] = "skipped", f"{missing} is not importable: {last_line(error)}"
            self.drop_instance(free_device=True)
        except BaseException as error:  # noqa: BLE001 - the point's error, never the worker's end
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            record["status"], record["message"] = "error", last_line(error)
            out_of_memory = self.torch is not None and isinstance(error, getattr(
                self.torch.cuda, "OutOfMemoryError", ())) or "out of memory" in record["message"]
            self.drop_instance(free_device=True)
            # A CUDA error other than running out of memory can leave the context unusable: a fresh
            # worker takes the next point.
            result["worker_exits"] = on_gpu and not out_of_memory

    def put_work(self, point: dict, declared, record: dict) -> None:
        """FLOPs and bytes of the implementation's own work model where it has one, else of a kernel
        declared in Python; the rank counts those of C++ kernels."""
        kernel = api.registry.kernels.get(point["kernel"])
        count = declared.work or (kernel.work if kernel is not None else None)
        if count is None:
            return
        work = count(dict(point["params"]), point["mode"])
        record["flops"], record["bytes"] = float(work.flops), float(work.bytes)


def forget_compiled_shapes() -> None:
    """Drops what torch.compile learnt from the shapes it has seen. Once a compiled function meets a
    second shape, torch recompiles it for dynamic shapes, whose kernels are slower than those made for
    one shape: without this, a point's time would depend on which points (and which checks, at
    reduced shapes) the worker ran before it. Each shape is compiled for itself, in the first call,
    which do_bench keeps out of the timing."""
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is None:
        return
    counters = getattr(getattr(dynamo, "utils", None), "counters", None)
    if counters is not None and not counters.get("frames"):
        return  # nothing compiled since the last reset: nothing to forget
    dynamo.reset()


def gpu_facts_empty() -> dict:
    return {"index": -1, "name": "", "uuid": "", "pci_bus_id": "", "architecture": "", "memory_bytes": 0,
            "multiprocessors": 0, "driver_version": "", "cuda_driver_version": "", "cuda_runtime_version": "",
            "cublas_version": "", "nccl_version": ""}


class DeviceMemory:
    """The device's peak allocation during a point, as torch's caching allocator counts it."""

    def __init__(self, torch):
        self.torch = torch
        if torch is not None:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()

    def peak(self) -> int:
        """The peak, less the timer's flush buffer (allocated before, and not the point's)."""
        if self.torch is None:
            return 0
        self.torch.cuda.synchronize()
        flush = sum(buffer.numel() * buffer.element_size() for buffer in CudaEventTimer._buffers.values())
        return max(0, int(self.torch.cuda.max_memory_allocated()) - flush)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m kernelsweep.worker", description=__doc__)
    parser.add_argument("--in-fd", type=int, required=True)
    parser.add_argument("--out-fd", type=int, required=True)
    parser.add_argument("--local-rank", type=int, default=0)
    parser.add_argument("--module", action="append", default=[], help="a module of kernels to import (repeatable)")
    args = parser.parse_args(argv)
    # A stop (Ctrl-C, scancel, a time limit) is the rank's to handle; the rank's death ends the worker
    # (the parent-death signal set before exec stays set).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    return Worker(PipeChannel(args.in_fd, args.out_fd), args.local_rank, args.module).serve()


if __name__ == "__main__":
    sys.exit(main())
