#pragma once
// Which GPU a worker takes. One GPU per rank: the local rank modulo the visible GPUs; where
// CUDA_VISIBLE_DEVICES leaves one GPU visible (Slurm's --gpu-bind), that one.
namespace ks {

int choose_gpu(int local_rank, int visible_gpus);

// Makes `ordinal` the current device of this process (worker only). Throws on failure; a no-op in a
// build without CUDA.
void bind_gpu(int ordinal);

}  // namespace ks
