"""Declaring kernels and implementations in Python: the same concepts as kernels/kernel.h.

A kernel declares its parameters (type, default, bounds, allowed values, help), its modes and the
work of one call (FLOPs and bytes, for TFLOP/s and GB/s). An implementation is a factory: given one
point's parameters and the device it runs on, it sets the point up (allocations, inputs) and returns
an Instance, which binds each mode to the callable the timing loop calls and, optionally, a check
against a reference. Implementations may also be of kernels declared in C++ (gemm,
distill_cosine_loss): kernelsweep's own torch and Liger implementations are such.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

PARAM_TYPES = ("integer", "number", "string", "boolean")
BACKENDS = ("cpu", "cuda", "any")


@dataclass
class Param:
    name: str
    type: str
    default: Any
    help: str = ""
    allowed: Sequence[Any] = ()
    min: Optional[float] = None
    max: Optional[float] = None
    also: Sequence[Any] = ()  # values accepted besides those of the type ("auto")

    def to_json(self) -> dict:
        return {"name": self.name, "type": self.type, "default": self.default, "help": self.help,
                "allowed": list(self.allowed), "min": self.min, "max": self.max, "special": list(self.also)}


def integer(name: str, default: Optional[int], help: str = "", *, min=None, max=None, also=()) -> Param:
    return Param(name, "integer", default, help, (), min, max, tuple(also))


def number(name: str, default: Optional[float], help: str = "", *, min=None, max=None, also=()) -> Param:
    return Param(name, "number", default, help, (), min, max, tuple(also))


def boolean(name: str, default: Optional[bool], help: str = "") -> Param:
    return Param(name, "boolean", default, help)


def text(name: str, default: Optional[str], help: str = "", *, also=()) -> Param:
    return Param(name, "string", default, help, (), None, None, tuple(also))


def choice(name: str, default: Optional[str], allowed: Sequence[str], help: str = "") -> Param:
    return Param(name, "string", default, help, tuple(allowed))


class Skip(Exception):
    """Raised by a factory (or bind) when the point cannot run here for a reason that is not an
    error: a package that is not importable, a device it does not support. The point is recorded
    `skipped` with the message."""


@dataclass
class Work:
    """FLOPs and bytes moved by one call; NaN: not counted."""
    flops: float = math.nan
    bytes: float = math.nan


@dataclass
class Check:
    """A comparison with a reference: whether it agreed, and what was compared and how far apart."""
    passed: bool
    detail: str = ""


@dataclass
class BoundMode:
    """One mode of an instance: run() is one call (on a GPU: enqueued on the current stream,
    returning without waiting); check() runs the mode once more and compares with a reference."""
    run: Callable[[], Any]
    check: Optional[Callable[[], Check]] = None


class Instance:
    """One point's kernel, set up once per shape and bound to each of its modes in turn.

    Subclass it and override bind(), or pass run= (and check=) for a kernel of one mode."""

    def __init__(self, run: Optional[Callable[[], Any]] = None, check: Optional[Callable[[], Check]] = None,
                 device_bytes: int = 0):
        self._run, self._check, self._device_bytes = run, check, device_bytes

    def bind(self, mode: str) -> BoundMode:
        if self._run is None:
            raise NotImplementedError(f"{type(self).__name__} binds no mode: override bind() or pass run=")
        return BoundMode(self._run, self._check)

    def device_bytes(self) -> int:
        """Device memory the instance holds by its own count; the worker measures the device too."""
        return self._device_bytes


@dataclass
class KernelDeclaration:
    name: str
    title: str
    description: str
    parameters: List[Param]
    modes: List[str]
    work: Optional[Callable[[dict, str], Work]]
    validate: Optional[Callable[[dict], Optional[str]]]
    module: str

    def to_json(self) -> dict:
        return {"name": self.name, "title": self.title, "description": self.description,
                "parameters": [p.to_json() for p in self.parameters], "modes": list(self.modes),
                "module": self.module}


@dataclass
class ImplementationDeclaration:
    kernel: str
    name: str
    backend: str
    help: str
    make: Callable[[dict, str], Instance]
    module: str
    # Distributions whose versions the implementation document records ("liger-kernel"), and labels
    # of the run documents taken from them ({"liger_version": "liger-kernel"}).
    packages: Sequence[str] = ()
    labels: Dict[str, str] = field(default_factory=dict)
    # The work of one call where the library this implementation calls does more than the mode's
    # operation (Liger's function computing gradients under torch.no_grad()); None: the kernel's.
    work: Optional[Callable[[dict, str], Work]] = None

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "name": self.name, "backend": self.backend, "help": self.help,
                "module": self.module}


class Registry:
    """What the imported modules declared, keyed by kernel name and (kernel, implementation)."""

    def __init__(self):
        self.kernels: Dict[str, KernelDeclaration] = {}
        self.implementations: Dict[tuple, ImplementationDeclaration] = {}

    def add_kernel(self, declaration: KernelDeclaration) -> None:
        taken = self.kernels.get(declaration.name)
        if taken is not None and taken.module != declaration.module:
            raise ValueError(f"kernel {declaration.name} is declared twice (modules {taken.module} and "
                             f"{declaration.module})")
        self.kernels[declaration.name] = declaration

    def add_implementation(self, declaration: ImplementationDeclaration) -> None:
        key = (declaration.kernel, declaration.name)
        taken = self.implementations.get(key)
        if taken is not None and taken.module != declaration.module:
            raise ValueError(f"implementation {declaration.kernel}/{declaration.name} is declared twice (modules "
                             f"{taken.module} and {declaration.module})")
        self.implementations[key] = declaration

    def in_module(self, module: str):
        kernels = [k for k in self.kernels.values() if k.module == module]
        implementations = [i for i in self.implementations.values() if i.module == module]
        return kernels, implementations


registry = Registry()


def _caller_module(depth: int = 2) -> str:
    import sys
    return sys._getframe(depth).f_globals.get("__name__", "__main__")


def _check_name(what: str, name: str) -> None:
    if not name or not (name[0].isalpha() or name[0] == "_") or not all(c.isalnum() or c in "_-" for c in name):
        raise ValueError(f"{what} name {name!r}: use letters, digits, _ and -, starting with a letter")


def kernel(name: str, *, title: str = "", description: str = "", parameters: Sequence[Param] = (),
           modes: Sequence[str] = ("forward",), work: Optional[Callable[[dict, str], Work]] = None,
           validate: Optional[Callable[[dict], Optional[str]]] = None) -> KernelDeclaration:
    """Declares kernel `name`: its parameters, modes, the work of one call (work(params, mode) ->
    Work) and constraints between parameters (validate(params) -> the problem as "key: what is
    wrong", or None)."""
    _check_name("kernel", name)
    seen = set()
    for p in parameters:
        if p.type not in PARAM_TYPES:
            raise ValueError(f"kernel {name}: parameter {p.name} has type {p.type!r} (one of {PARAM_TYPES})")
        if p.name in seen:
            raise ValueError(f"kernel {name}: parameter {p.name} is declared twice")
        seen.add(p.name)
    if not modes:
        raise ValueError(f"kernel {name}: declares no mode")
    declaration = KernelDeclaration(name, title or name, description, list(parameters), list(modes), work, validate,
                                    _caller_module())
    registry.add_kernel(declaration)
    return declaration


def implementation(kernel: str, name: str, *, backend: str = "any", help: str = "", packages: Sequence[str] = (),
                   labels: Optional[Dict[str, str]] = None, work: Optional[Callable[[dict, str], Work]] = None):
    """Decorates the factory of implementation `name` of `kernel`: make(params, device) -> Instance,
    where params is the point's parameters (a dict, defaults filled in) and device "cuda" or "cpu".
    backend: "cuda" (needs a GPU), "cpu", or "any" (the GPU where the rank has one, else the CPU).
    work(params, mode) -> Work: the work of one call, only where the library it calls cannot help doing
    more than the mode's operation, which every implementation of the kernel times (its % of peak is
    held against what it does)."""
    if backend not in BACKENDS:
        raise ValueError(f"implementation {kernel}/{name}: backend {backend!r} is not one of {BACKENDS}")
    _check_name("implementation", name)
    module = _caller_module()

    def register(make: Callable[[dict, str], Instance]):
        registry.add_implementation(ImplementationDeclaration(kernel, name, backend, help, make, module,
                                                              tuple(packages), dict(labels or {}), work))
        return make

    return register
