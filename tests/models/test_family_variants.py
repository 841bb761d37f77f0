"""A family's named prompt variants: the prompt its authors use for one benchmark, picked per suite.

GUI-Owl-1.5's authors prompt OSWorld-G with a system text that also offers the ``terminate``
action for an infeasible task (X-PLUG/MobileAgent@11cea57 ``eval_grounding_benchmarks.py``:
``only_two_action_system_prompt + "\\n" + infesible_prefix``); UI-Venus' ``inference`` can leave
its refusal sentence out (``do_not_use_refusal=True``). A suite picks one with
``[models.<family>] variant = "<name>"``; the built-in OSWorld-G suite picks GUI-Owl's.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from chat_server import ChatServer, Reply
from PIL import Image

from pytest_uiground.models import families, overrides
from pytest_uiground.models.openai.client import OpenAIChatModel
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import Sample, Target
from pytest_uiground.suite.config import SuiteConfigError, load_suite_config

SUITES = Path(__file__).resolve().parents[2] / "suites"

# sha256 and length of the official texts, hashed once outside the code under test: GUI-Owl's
# OSWorld-G system text (the two JSON strings of ../shared/reference/model-families-2026.md, joined
# by "\n" as the evaluation joins them) and UI-Venus' do_not_use_refusal=True prompt (verbatim from
# inclusionAI/UI-Venus@c3a1442 eval_screenspot_pro.py, UIVenusWrapper.inference).
OFFICIAL = {
    ("gui-owl", "osworld-g", "system"): ("f956537455ae8fc2b5f3cf8a60eba1406d7b4dd3ba0018c29bbf1db4b17fa1e6", 1771),
    ("ui-venus", "no-refusal", "user"): ("ad67b023cc1bf6f80de4b8c9e0492add8ab4969369b6a04e2bc431c7210dcf01", 176),
}
TERMINATE = ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "failure"}}'
             "\n</tool_call>")


def sample(task: str = "point") -> Sample:
    return Sample("s1", ImageRef.from_path("x.png", size=(1920, 1080)), "Open the menu.", task,  # type: ignore[arg-type]
                  Target(box=Box(0, 0, 1, 1)))


@pytest.mark.parametrize(("family", "variant", "part"), list(OFFICIAL))
def test_a_variant_is_the_official_text(family: str, variant: str, part: str) -> None:
    prompt = families.get(family).prompt("point", variant)
    text = prompt.system if part == "system" else prompt.user
    assert text is not None
    assert (hashlib.sha256(text.encode()).hexdigest(), len(text)) == OFFICIAL[family, variant, part]
    assert families.get(family).prompt("point") != prompt  # the family's default prompt is another


def test_a_variant_keeps_the_placement_and_instruction_rules() -> None:
    owl = families.get("gui-owl").prompt("point", "osworld-g")
    assert owl.image_first and owl.text("Open the menu.") == "Open the menu."
    assert (owl.system or "").startswith(families.get("gui-owl").prompt("point").system or "?")
    venus = families.get("ui-venus").user_text(sample(), "no-refusal")
    assert venus.endswith("\nOpen the menu. \n\nThe output should just be the coordinates of a point, in the "
                          "format [x,y].")  # one final "." dropped, the refusal sentence left out
    assert families.get("ui-venus").user_text(sample()).endswith("the output should be [-1,-1].")
    # a task kind the variant does not name keeps the family's prompt
    assert families.get("gui-owl").prompt("option", "osworld-g") == families.get("gui-owl").prompt("option")


def test_an_unknown_variant_names_the_family_the_value_and_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"family 'gui-owl' has no prompt variant 'osworld' \(known: osworld-g\)"):
        families.get("gui-owl").prompt("point", "osworld")
    with pytest.raises(ValueError, match=r"family 'gta1' has no prompt variant 'x' \(known: none\)"):
        families.get("gta1").user_text(sample(), "x")


def write_suite(tmp_path: Path, table: str) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text('[suite]\nname = "v"\nversion = "1"\n[loader]\nname = "synthetic"\n[[metrics]]\nname = "accuracy"\n'
                    f'tasks = ["point"]\n{table}\n')
    return path


def test_the_suite_file_is_checked_when_read(tmp_path: Path) -> None:
    with pytest.raises(SuiteConfigError, match=r"suite.toml: family 'gui-owl' has no prompt variant 'refusal'"):
        load_suite_config(write_suite(tmp_path, '[models.gui-owl]\nvariant = "refusal"'))
    with pytest.raises(SuiteConfigError, match=r"\[models.gui-owl\].variant: expected a non-empty string, got 1"):
        load_suite_config(write_suite(tmp_path, "[models.gui-owl]\nvariant = 1"))
    with pytest.raises(SuiteConfigError, match=r"\[models.gui-owl\].variant: expected a non-empty string, got ''"):
        load_suite_config(write_suite(tmp_path, '[models.gui-owl]\nvariant = ""'))
    ok = load_suite_config(write_suite(tmp_path, '[models.ui-venus]\nvariant = "no-refusal"'))
    assert overrides.resolve("v", "ui-venus", ok.models["ui-venus"]).variant == "no-refusal"


def test_the_osworld_g_suite_prompts_gui_owl_with_the_refusal_action_over_the_wire(tmp_path: Path) -> None:
    """``--model openai --uiground-parser gui-owl`` on the OSWorld-G suite: the request carries the
    OSWorld-G system text, and the terminate answer it invites reads as a refusal."""
    config = load_suite_config(SUITES / "osworld_g" / "suite.toml")
    ov = overrides.resolve(config.name, "gui-owl", config.models["gui-owl"])
    assert ov.variant == "osworld-g" and ov.key()["variant"] == "osworld-g"  # a new cache key, not the old answers
    assert "variant" not in overrides.NONE.key()
    path = tmp_path / "x.png"
    Image.new("RGB", (1920, 1080), (40, 90, 160)).save(path)
    s = Sample("s1", ImageRef.from_path(path), "Open the menu.", "point", Target(refusal=True))
    bodies: list[dict[str, Any]] = []

    def answer(body: dict[str, Any]) -> Reply:
        bodies.append(body)
        return Reply.ok(TERMINATE)

    with ChatServer(answer) as srv:
        model = OpenAIChatModel(api_base=srv.url, api_key="sk-test", served_model="m", parser="gui-owl",
                                request_timeout=5.0, max_retries=0)
        try:
            model.use_overrides(ov)
            (pred,) = model.predict([s])
            model.use_overrides(overrides.NONE)
            model.predict([s])
        finally:
            model.close()
    assert pred.refused and pred.point is None and not pred.format_error
    first, plain = (b["messages"][0]["content"] for b in bodies)
    assert first == families.get("gui-owl").prompt("point", "osworld-g").system
    assert hashlib.sha256(first.encode()).hexdigest() == OFFICIAL["gui-owl", "osworld-g", "system"][0]
    assert plain == families.get("gui-owl").prompt("point").system != first
