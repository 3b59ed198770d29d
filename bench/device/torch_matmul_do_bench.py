"""torch.matmul of bf16 SIZE^3 timed by triton.testing.do_bench on every visible GPU: the figure
kernelsweep's cuBLASLt gemm median is compared with (issue: distributed run). Inputs are uniform in
[-1, 1) drawn in fp32 and rounded to bf16, as kernelsweep's gemm generates them ("fp32-drawn"); for
contrast also torch.rand drawn directly in bf16 ("bf16-drawn"), whose values are multiples of 2^-8
before scaling: fewer random mantissa bits, less power, higher clocks on a power-bound product."""
import json
import sys

import torch
from triton.testing import do_bench

size = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
draws = sys.argv[2:] or ["fp32-drawn", "bf16-drawn"]
for device in range(torch.cuda.device_count()):
    torch.cuda.set_device(device)
    for inputs in draws:
        draw = torch.float32 if inputs == "fp32-drawn" else torch.bfloat16
        a = (torch.rand(size, size, device=f"cuda:{device}", dtype=draw) * 2 - 1).to(torch.bfloat16)
        b = (torch.rand(size, size, device=f"cuda:{device}", dtype=draw) * 2 - 1).to(torch.bfloat16)
        median, p20, p80 = do_bench(lambda: torch.matmul(a, b), warmup=25, rep=100, quantiles=[0.5, 0.2, 0.8])
        print(json.dumps({"device": device, "name": torch.cuda.get_device_name(device),
                          "uuid": str(torch.cuda.get_device_properties(device).uuid), "size": size,
                          "inputs": inputs, "median_ms": median, "p20_ms": p20, "p80_ms": p80,
                          "tflops": 2 * size**3 / (median * 1e-3) / 1e12, "torch": torch.__version__}), flush=True)
