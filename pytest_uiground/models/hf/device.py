"""Device placement: one GPU per xdist worker, never every worker on cuda:0."""

from __future__ import annotations

import re
from collections.abc import Callable


def worker_index(worker_id: str) -> int:
    """``gw3`` → 3; the controller or a run without xdist (``master``) → 0."""
    m = re.fullmatch(r"gw(\d+)", worker_id)
    return int(m.group(1)) if m else 0


def cuda_device_count() -> int:
    """Number of visible CUDA devices; imports torch, so only models that use it call this."""
    try:
        import torch
    except ImportError:
        return 0
    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0


def resolve_device(spec: str, worker_id: str, count: Callable[[], int] = cuda_device_count) -> str:
    """Turn ``--uiground-device`` into a concrete device for this process.

    ``auto`` gives worker gwN ``cuda:(N mod count)`` and falls back to ``cpu``
    without a GPU; ``cuda`` alone is treated like ``auto`` restricted to CUDA.
    """
    if spec in ("auto", "cuda"):
        n = count()
        if n == 0:
            if spec == "cuda":
                raise RuntimeError("--uiground-device cuda: no CUDA device is visible; use --uiground-device cpu")
            return "cpu"
        return f"cuda:{worker_index(worker_id) % n}"
    return spec


def device_problem(spec: str, count: Callable[[], int] = cuda_device_count) -> str | None:
    """Why ``--uiground-device`` cannot work on this machine (``cuda:7`` with fewer GPUs), or None.

    Checked once at start-up so that a missing GPU fails the run once instead of every
    test. Only an explicit ``cuda:N`` imports torch here; ``auto``, ``cpu`` and ``mps`` do not.
    """
    m = re.fullmatch(r"cuda:(\d+)", spec)
    if m is None:
        return None
    n = count()
    if int(m.group(1)) < n:
        return None
    seen = f"{n} CUDA device(s) visible (cuda:0..cuda:{n - 1})" if n else "no CUDA device is visible"
    return (f"--uiground-device {spec}: {seen}; pick one of those, 'auto' (one GPU per xdist worker, CPU "
            "without a GPU) or 'cpu'")
