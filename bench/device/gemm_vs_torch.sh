#!/usr/bin/env bash
# kernelsweep's cuBLASLt gemm against torch.matmul timed by triton.testing.do_bench, on one GPU, in
# one call, interleaved so that neither side alone gets a cold or a warm GPU:
#   bench/device/gemm_vs_torch.sh BIN_DIR KIT_DIR OUT_DIR
set -uo pipefail
bin=$1 kit=$2 out=$3
mkdir -p /tmp/kit /tmp/ks-cmp && tar xJf "$kit/kit.tar.xz" -C /tmp/kit && source /tmp/kit/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
[[ ${RUN_GPU_TESTS:-1} == 1 ]] && for t in "$bin"/gpu_*; do "$t" 2>&1 | grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) |tests ran|PASSED|FAILED|median|GPU 0" ; done
for round in 1 2 3; do
  echo "== round $round: torch"
  python3 bench/device/torch_matmul_do_bench.py 8192
  python3 bench/device/torch_matmul_do_bench.py 4096
  echo "== round $round: kernelsweep"
  mpirun -np 1 "$bin/kernelsweep" run configs/gemm-torch-compare.yaml --overwrite --check none \
    --output-dir /tmp/ks-cmp/round$round --kernelindex-format jsonl > /tmp/ks-cmp/round$round.log 2>&1
  python3 - "$round" <<'PY'
import json, sys
for line in open(f"/tmp/ks-cmp/round{sys.argv[1]}/kernelindex/kernelindex.jsonl"):
    d = json.loads(line)
    m = d["run"]["spec"]["sourceNative"]["metrics"]
    print(json.dumps({"kernelsweep": d["workload"]["spec"]["parameters"]["M"],
                      "implementation": d["implementation"]["spec"]["implementation"], "median_ms": m["median_ns"] / 1e6,
                      "p20_ms": m["p20_ns"] / 1e6, "p80_ms": m["p80_ns"] / 1e6, "n_repeat": m["n_repeat"]}))
PY
done
nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
tar czf "$out/compare.tar.gz" -C /tmp/ks-cmp .
