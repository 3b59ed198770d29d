"""kernelsweep's own Python implementations of kernels declared in C++: importing this package
registers them (gemm `torch`; distill_cosine_loss `torch` and `liger`; rms_norm `torch` and `liger`).
Nothing here needs a GPU or liger_kernel to import: the liger implementations import liger_kernel
when they make an instance."""
from . import distill_cosine, gemm, rms_norm

__all__ = ["distill_cosine", "gemm", "rms_norm"]
