// distill_cosine_loss's Python implementations, run by the Python worker
// (python/kernelsweep/implementations/distill_cosine.py): Liger's own kernel, and the torch provider of
// Liger's benchmark.
#include "kernels/kernel.h"

KS_PYTHON_IMPLEMENTATION(distill_cosine_loss, liger, cuda,
                         "Liger-Kernel's LigerFusedLinearCosineSimilarityFunction, called as Liger's benchmark "
                         "calls it (Python worker; needs liger_kernel importable)",
                         "kernelsweep.implementations.distill_cosine");
KS_PYTHON_IMPLEMENTATION(distill_cosine_loss, torch, any,
                         "the torch provider of Liger's benchmark: linear layers, cross-entropy and cosine "
                         "similarity in plain torch (Python worker)",
                         "kernelsweep.implementations.distill_cosine");
