"""kernelsweep's own Python implementations of kernels declared in C++: importing this package
registers them (gemm `torch`; distill_cosine_loss `torch` and `liger`). Nothing here needs a GPU or
liger_kernel to import: the liger implementation imports liger_kernel when it makes an instance."""
from . import distill_cosine, gemm

__all__ = ["distill_cosine", "gemm"]
