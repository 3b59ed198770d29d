"""Whether Liger's distill_cosine_loss full pass is bound by the host or by the GPU, in one process.

Prints, for the pass at TOKENS (default 1024) tokens on the draw of Liger's benchmark:
  do_bench      triton.testing.do_bench's median (rep 100 ms), three times, as Liger's script times it;
  host_enqueue  the median host time to enqueue one pass (no synchronisation inside it);
  gpu_held      the median GPU time of one pass enqueued behind a sleep kernel that holds the stream,
                so that none of the host's launch time is in it (what kernelsweep's cold protocol does).
Where do_bench follows host_enqueue rather than gpu_held, a timing measures the host's CPU.

Run in fresh processes on one core, Liger-Kernel at 08906d3d on PYTHONPATH (bench/gpu/liger_benchmark.sh):
  for i in $(seq 20); do taskset -c 3 python3 bench/gpu/liger_host_bound.py $i; done
"""
import os
import statistics
import sys
import time

import torch
import triton
from liger_kernel.chunked_loss.cosine_similarity_loss import LigerFusedLinearCosineSimilarityFunction

tokens, hidden, vocab, dtype = int(os.environ.get("TOKENS", 1024)), 4096, 128256, torch.bfloat16
student_lin = torch.nn.Linear(hidden // 2, vocab, bias=False).to(dtype=dtype).to("cuda")
teacher_lin = torch.nn.Linear(hidden, vocab, bias=False).to(dtype=dtype).to("cuda")
student = torch.rand(tokens, hidden // 2, device="cuda", dtype=dtype).requires_grad_(True)
teacher = torch.rand(tokens, hidden, device="cuda", dtype=dtype)
target = torch.randint(0, vocab, (tokens,), device="cuda")


def full():
    loss = LigerFusedLinearCosineSimilarityFunction.apply(
        student, student_lin.weight, teacher, teacher_lin.weight, target, None, None, 0.5, 0.5)
    loss.backward()


medians = [triton.testing.do_bench(full, rep=100, quantiles=[0.5, 0.2, 0.8])[0] for _ in range(3)]

host = []
for _ in range(20):
    torch.cuda.synchronize()
    start = time.perf_counter()
    full()
    host.append((time.perf_counter() - start) * 1e3)
    torch.cuda.synchronize()

held = []
for _ in range(10):
    torch.cuda.synchronize()
    torch.cuda._sleep(200_000_000)  # about 0.1 s of GPU cycles: longer than enqueueing one pass
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    full()
    end.record()
    torch.cuda.synchronize()
    held.append(begin.elapsed_time(end))

label = sys.argv[1] if len(sys.argv) > 1 else "-"
print(f"{label} do_bench {' '.join(f'{m:.3f}' for m in medians)} host_enqueue {statistics.median(host):.3f} "
      f"gpu_held {statistics.median(held):.3f}", flush=True)
