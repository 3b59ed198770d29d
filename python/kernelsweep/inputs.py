"""The counter-based input generator of kernels/common/inputs.h, in torch: every value is a pure
function of (seed, tensor, index), so a Python implementation sees bit for bit the inputs the C++
implementations (and their references) see, on the CPU or generated on the GPU.

torch has no uint64 arithmetic; int64 arithmetic wraps the same way, and a logical right shift is an
arithmetic one masked to the bits that remain.
"""
from __future__ import annotations

import torch

_M64 = (1 << 64) - 1


def _signed(constant: int) -> int:
    constant &= _M64
    return constant - (1 << 64) if constant >= 1 << 63 else constant


_GOLDEN = _signed(0x9E3779B97F4A7C15)
_TENSOR = _signed(0xD1B54A32D192ED03)
_MIX1 = _signed(0xBF58476D1CE4E5B9)
_MIX2 = _signed(0x94D049BB133111EB)

# Elements generated at a time: bounds the int64 temporaries (8 bytes each) on large tensors.
_CHUNK = 1 << 25


def _shift_right(z: torch.Tensor, bits: int) -> torch.Tensor:
    return (z >> bits) & ((1 << (64 - bits)) - 1)


def _uniform_chunk(base: int, start: int, count: int, device) -> torch.Tensor:
    z = torch.arange(start, start + count, dtype=torch.int64, device=device)
    z += base
    z ^= _shift_right(z, 30)
    z *= _MIX1
    z ^= _shift_right(z, 27)
    z *= _MIX2
    z ^= _shift_right(z, 31)
    return _shift_right(z, 40).to(torch.float32) * (1.0 / 16777216.0)


def counter_uniform(seed: int, tensor: int, count: int, device="cpu", *, first: int = 0) -> torch.Tensor:
    """Values first .. first+count-1 of tensor `tensor` under `seed`: uniform in [0, 1), float32,
    exactly ks::counter_uniform(seed, tensor, index). `first` lets a caller (or a test) reach indices
    far into a tensor without generating the ones before them."""
    base = _signed((seed * 0x9E3779B97F4A7C15 + tensor * 0xD1B54A32D192ED03) & _M64)
    out = torch.empty(count, dtype=torch.float32, device=device)
    for offset in range(0, count, _CHUNK):
        n = min(_CHUNK, count - offset)
        out[offset:offset + n] = _uniform_chunk(base, first + offset, n, device)
    return out


def counter_symmetric(seed: int, tensor: int, count: int, device="cpu", *, first: int = 0) -> torch.Tensor:
    """The same values mapped to [-1, 1): exactly ks::counter_symmetric, 2u - 1 in float32."""
    return counter_uniform(seed, tensor, count, device, first=first).mul_(2.0).sub_(1.0)
