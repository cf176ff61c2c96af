"""Which device a model set runs on, and what the machine's CPU is called.

torch alone, no model classes: the app's sidebar draws these before the models load.

What it leaves out: how many threads the CPU runs with (specviz.generator.threads).
"""
import platform

import torch


def pick_device(device: str | None = None) -> tuple[torch.device, torch.dtype]:
    """The device to run on (None: the best there is) and the dtype a large model runs in there.

    >>> pick_device("cpu")
    (device(type='cpu'), torch.float32)
    """
    if device is None:
        device = "cuda" if torch.cuda.is_available() else (
            "mps" if torch.backends.mps.is_available() else "cpu")
    dev = torch.device(device)
    return dev, (torch.float32 if dev.type == "cpu" else torch.bfloat16 if dev.type == "cuda" else torch.float16)


def cpu_name() -> str:
    """The CPU model from /proc/cpuinfo where there is one, else what platform reports."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
