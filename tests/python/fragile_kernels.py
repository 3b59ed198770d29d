"""A kernel declared in Python whose implementations misbehave on purpose, for the tests of the
Python worker: each must cost only its own points, with the status that says what happened."""
import os
import signal
import time

import kernelsweep as ks

ks.kernel("fragile", title="Misbehaving Python implementations", modes=["forward"],
          parameters=[ks.integer("id", 0, "a point number", min=0)],
          work=lambda p, mode: ks.Work(flops=1000.0 * (p["id"] + 1), bytes=8.0))


def busy(params):
    total = 0
    for i in range(200 + params["id"]):
        total += i
    return total


@ks.implementation("fragile", "steady", backend="cpu", help="a short loop that always passes")
def make_steady(params, device):
    return ks.Instance(run=lambda: busy(params), check=lambda: ks.Check(True, f"steady id {params['id']}"))


@ks.implementation("fragile", "missing_package", backend="cpu", help="imports a package that is not there")
def make_missing(params, device):
    import kernelsweep_no_such_package  # noqa: F401
    return ks.Instance(run=lambda: None)


@ks.implementation("fragile", "raises", backend="cpu", help="raises while it runs")
def make_raises(params, device):
    def run():
        raise ValueError(f"fragile refuses id {params['id']}")
    return ks.Instance(run=run)


@ks.implementation("fragile", "dies", backend="cpu", help="kills its own interpreter")
def make_dies(params, device):
    os.kill(os.getpid(), signal.SIGKILL)


@ks.implementation("fragile", "hangs", backend="cpu", help="never returns")
def make_hangs(params, device):
    return ks.Instance(run=lambda: time.sleep(3600))


@ks.implementation("fragile", "wrong", backend="cpu", help="its check disagrees")
def make_wrong(params, device):
    return ks.Instance(run=lambda: busy(params), check=lambda: ks.Check(False, "got 41, expected 42"))


def cpp_workers_beside():
    """The process ids of the C++ workers (`kernelsweep worker`) that this worker's rank runs beside it:
    the processes of the same parent whose first argument is `worker`."""
    rank, found = os.getppid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])  # "pid (comm) state ppid ..."
            if parent != rank:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        if len(argv) > 1 and argv[1] == b"worker":
            found.append(int(entry))
    return found


@ks.implementation("fragile", "alone", backend="cpu",
                   help="fails its check while a C++ worker of its rank runs beside it")
def make_alone(params, device):
    def check():
        beside = cpp_workers_beside()
        return ks.Check(not beside, f"C++ workers beside the Python worker: {beside}" if beside else "alone")
    return ks.Instance(run=lambda: busy(params), check=check)
