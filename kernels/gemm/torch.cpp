// gemm `torch`: torch.matmul, run by the Python worker (python/kernelsweep/implementations/gemm.py).
#include "kernels/kernel.h"

KS_PYTHON_IMPLEMENTATION(gemm, torch, any, "torch.matmul (Python worker; the GPU where there is one, else the CPU)",
                         "kernelsweep.implementations.gemm");
