// rms_norm's Python implementations, run by the Python worker
// (python/kernelsweep/implementations/rms_norm.py): the two providers of Liger's benchmark, its torch
// LlamaRMSNorm and Liger's own kernel.
#include "kernels/kernel.h"

KS_PYTHON_IMPLEMENTATION(rms_norm, torch, any,
                         "the torch provider of Liger's benchmark: LlamaRMSNorm in plain torch ops, casting_mode "
                         "llama and offset 0 only (Python worker; the GPU where there is one, else the CPU)",
                         "kernelsweep.implementations.rms_norm");
KS_PYTHON_IMPLEMENTATION(rms_norm, liger, cuda,
                         "Liger-Kernel's LigerRMSNorm, called as Liger's benchmark calls it (Python worker; needs "
                         "liger_kernel importable)",
                         "kernelsweep.implementations.rms_norm");
