"""The coordinate-contract probe: is the model answering in the frame its family reads?

The most common reason a published grounding number does not reproduce is not the model but
the contract around it: answers in 0..1000 read as pixels, a server resizing with another
``max_pixels`` than the family assumes, x and y swapped, an endpoint that drops the image.
Each of these scores a plausible-looking low accuracy after a full run. The probe sends a
small generated calibration set (:mod:`.calibration`, 13 requests) to the model *before* the
suite, reads the answers with the family exactly as the run will, and fits the mapping from
that reading to the truth (:mod:`.fit`); anything but the identity stops the session with a
diagnosis naming the wrong frame and the fix.

``--uiground-probe`` runs it at the start of a pytest session (:mod:`.plugin`);
``python -m pytest_uiground probe --model ... --uiground-parser ...`` runs it alone
(:mod:`.cli`). The verdict and the fitted mapping go into the run's summary.json (under
``provenance.probe`` and the model fingerprint), hence the report.
"""

from __future__ import annotations

from collections.abc import Callable

from pytest_uiground.models.base import ModelAdapter, ModelOptions
from pytest_uiground.probe import calibration
from pytest_uiground.probe.fit import FamilyView, ProbeResult, diagnose, observe

__all__ = ["ProbeResult", "family_view", "run"]


def family_view(family: str, options: ModelOptions | None = None) -> FamilyView:
    """The family as the model will be read: for ``--model openai`` the client's own resize
    assumption (the family's rule or ``UIGROUND_OPENAI_*_PIXELS``), applied to the image it sends."""
    from pytest_uiground.models import families

    if options is None or options.name != "openai" or not families.get(family).needs_input_size:
        return FamilyView(family)
    from pytest_uiground.models.openai.wire import resize_rule_from_env

    fam = families.get(family)
    rule = resize_rule_from_env(parser=family)

    def input_size(size: tuple[int, int]) -> tuple[int, int]:
        return rule.input_size(fam.input_size(size) if fam.client_resize else size)

    return FamilyView(family, input_size=input_size, max_pixels=rule.max_pixels)


def run(model: ModelAdapter, view: FamilyView,
        screens: tuple[calibration.Screen, ...] = calibration.SCREENS,
        progress: Callable[[str], None] | None = None) -> ProbeResult:
    """Send the calibration set to ``model`` (one request per screen) and judge the answers."""
    samples = calibration.samples(screens)
    if progress is not None:
        progress(f"uiground probe: {len(samples)} calibration screens to {model.name} "
                 f"(family {view.name}, frame {view.frame})")
    predictions = model.predict(samples)
    return diagnose(view, observe(view, samples, predictions), requests=len(samples))
