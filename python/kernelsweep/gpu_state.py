"""The GPU's state around a measurement, as src/measure/gpu_state.cpp reads it: SM and memory clocks,
power draw, temperature and NVML's clock event ("throttle") reasons, through NVML loaded at run time
with ctypes. A machine without NVML measures all the same, with the state not recorded. Nothing here
changes any GPU setting."""
from __future__ import annotations

import ctypes
import os
import sys
from typing import Optional

_CLOCK_SM, _CLOCK_MEMORY, _TEMPERATURE_GPU = 1, 2, 0  # NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU

# The record's fields, as cluster/run_record.h gpu_state_fields() names them.
FIELDS = ("sm_clock_mhz", "memory_clock_mhz", "power_w", "temperature_c", "throttle_reasons")


class GpuStateReader:
    """One GPU's state through NVML; read() returns the five figures (None where NVML gives none)."""

    def __init__(self, nvml, device):
        self._nvml, self._device = nvml, device
        # Renamed in CUDA 12 (ClocksThrottleReasons to ClocksEventReasons); older drivers have only the first.
        self._reasons = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            nvml.nvmlDeviceGetCurrentClocksThrottleReasons

    def read(self) -> dict:
        value = ctypes.c_uint(0)
        state = dict.fromkeys(FIELDS)
        if self._nvml.nvmlDeviceGetClockInfo(self._device, _CLOCK_SM, ctypes.byref(value)) == 0:
            state["sm_clock_mhz"] = float(value.value)
        if self._nvml.nvmlDeviceGetClockInfo(self._device, _CLOCK_MEMORY, ctypes.byref(value)) == 0:
            state["memory_clock_mhz"] = float(value.value)
        if self._nvml.nvmlDeviceGetPowerUsage(self._device, ctypes.byref(value)) == 0:
            state["power_w"] = value.value / 1000.0
        if self._nvml.nvmlDeviceGetTemperature(self._device, _TEMPERATURE_GPU, ctypes.byref(value)) == 0:
            state["temperature_c"] = float(value.value)
        reasons = ctypes.c_ulonglong(0)
        state["throttle_reasons"] = int(reasons.value) if self._reasons(self._device, ctypes.byref(reasons)) == 0 else 0
        return state


def open_reader(gpu_uuid: str) -> Optional[GpuStateReader]:
    """The reader of the GPU with this UUID, or None (with the reason on stderr) where NVML is missing
    (KERNELSWEEP_NVML_LIBRARY names another library than libnvidia-ml.so.1) or does not know the GPU."""
    name = os.environ.get("KERNELSWEEP_NVML_LIBRARY") or "libnvidia-ml.so.1"
    try:
        nvml = ctypes.CDLL(name)
        if nvml.nvmlInit_v2() != 0:
            raise OSError("NVML did not initialise")
        device = ctypes.c_void_p()
        if nvml.nvmlDeviceGetHandleByUUID(gpu_uuid.encode(), ctypes.byref(device)) != 0:
            raise OSError(f"NVML does not know GPU {gpu_uuid}")
        return GpuStateReader(nvml, device)
    except (OSError, AttributeError) as error:
        print(f"kernelsweep worker: the GPU's clocks and power are not recorded: {name}: {error}", file=sys.stderr)
        return None


def record_fields(start: dict, end: dict) -> dict:
    """The record's GPU-state fields: sm_clock_mhz_start, sm_clock_mhz_end, ..."""
    fields = {}
    for name in FIELDS:
        fields[f"{name}_start"], fields[f"{name}_end"] = start[name], end[name]
    return fields
