"""noop `python`: a call that does nothing, run by the Python worker: an implementation of the
built-in no-op kernel. A sweep of it measures the Python worker's own cost per point beside the C++
worker's (noop `cpu`): bench/python_worker_overhead and bench/gpu/python_worker.sh load this module
(`python: {modules: [noop_python], path: [bench/python]}`)."""
import kernelsweep as ks


def _nothing():
    pass


@ks.implementation("noop", "python", backend="any", help="an empty Python function (the Python worker's overhead)")
def make(params, device):
    return ks.Instance(run=_nothing, check=lambda: ks.Check(True, "nothing to compare"))
