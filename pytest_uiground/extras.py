"""Optional dependencies: which extra brings a module, and one clear message when it is absent.

A core install has no torch, transformers, datasets, pyarrow or openai. Code that needs
them says so once, naming the extra to install, instead of a ``ModuleNotFoundError`` per
sample. Checks use ``find_spec``, so nothing heavy is imported to find out.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

TORCH_CPU_HINT = ("on a machine without a GPU install the CPU build of torch first: pip install torch torchvision "
                  "--index-url https://download.pytorch.org/whl/cpu")


class ExtraMissing(ImportError):
    """A feature's extra is not installed; the message names the ``pip install`` line."""


def absent(modules: Sequence[str]) -> list[str]:
    """The modules of ``modules`` that cannot be found (a broken finder counts as absent)."""
    out = []
    for mod in modules:
        try:
            found = importlib.util.find_spec(mod) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(mod)
    return out


def missing(extra: str, modules: Sequence[str]) -> str | None:
    """Why ``extra`` is not usable (its absent modules and the install line), or None when it is."""
    gone = absent(modules)
    if not gone:
        return None
    hint = f" ({TORCH_CPU_HINT})" if "torch" in gone else ""
    return (f"needs the [{extra}] extra, and {', '.join(gone)} {'is' if len(gone) == 1 else 'are'} not "
            f'installed: pip install "pytest-uiground[{extra}]"{hint}')


def require(extra: str, modules: Sequence[str], what: str) -> None:
    """Raise :class:`ExtraMissing` naming ``what`` and the extra when a module of ``modules`` is absent."""
    why = missing(extra, modules)
    if why:
        raise ExtraMissing(f"{what} {why}")
