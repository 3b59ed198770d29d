"""kernelsweep's Python side: the worker that times Python implementations with the do_bench
protocol, and the API that declares kernels and implementations in Python.

A module of kernels, swept like built-in ones (``python: {modules: [mykernels]}`` in a sweep file):

    import kernelsweep as ks

    softmax = ks.kernel("my_softmax", title="Row softmax", modes=["forward"],
                        parameters=[ks.integer("rows", 4096, "rows", min=1),
                                    ks.integer("cols", 1024, "columns", min=1)],
                        work=lambda p, mode: ks.Work(flops=5 * p["rows"] * p["cols"],
                                                     bytes=8 * p["rows"] * p["cols"]))

    @ks.implementation("my_softmax", "torch", backend="any", help="torch.softmax")
    def make(params, device):
        x = torch.rand(params["rows"], params["cols"], device=device)
        return ks.Instance(run=lambda: torch.softmax(x, dim=-1))
"""
from .api import (BoundMode, Check, Instance, Skip, Work, boolean, choice, implementation, integer, kernel, number,
                  registry, text)

__all__ = ["BoundMode", "Check", "Instance", "Skip", "Work", "boolean", "choice", "implementation", "integer", "kernel",
           "number", "registry", "text"]
