"""The figures a calibration is held to, measured apart from kernelsweep with torch: the best
bandwidth of a plain device-to-device copy (Tensor.copy_, bytes read plus written) and the best
throughput of a large square matmul per dtype, each the fastest of its repetitions timed with CUDA
events. A matmul's throughput on a power-limited GPU depends on its data: it is measured on signed
uniform data in [-1, 1) (`matmul_tflops`, what peak_flops multiplies) and on torch.rand's [0, 1)
(`matmul_tflops_unsigned`). Prints one JSON object.
    python3 bench/gpu/speed_of_light_reference.py [--copy-mib 1024] [--size 8192]"""
import argparse
import json

import torch


def fastest_ms(call, repetitions=30, warmup=5):
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(repetitions):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--copy-mib", type=int, default=1024)
    parser.add_argument("--size", type=int, default=8192)
    args = parser.parse_args()
    elements = args.copy_mib << 18
    source = torch.rand(elements, device="cuda")
    target = torch.empty_like(source)
    copy_ms = fastest_ms(lambda: target.copy_(source))
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "copy_gbps": 2 * 4 * elements / copy_ms / 1e6, "matmul_tflops": {}}
    del source, target
    n = args.size
    for key, draw in (("matmul_tflops", lambda dtype: torch.rand(n, n, device="cuda", dtype=dtype) * 2 - 1),
                      ("matmul_tflops_unsigned", lambda dtype: torch.rand(n, n, device="cuda", dtype=dtype))):
        out[key] = {}
        for name, dtype, tf32 in (("fp32", torch.float32, False), ("tf32", torch.float32, True),
                                  ("bf16", torch.bfloat16, False), ("fp16", torch.float16, False)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            a, b = draw(dtype), draw(dtype)
            out[key][name] = 2 * n**3 / fastest_ms(lambda: a @ b, repetitions=20) / 1e9
            del a, b
    print(json.dumps(out))


if __name__ == "__main__":
    main()
