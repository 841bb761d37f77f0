"""Prompts: the card's strings verbatim, and one prompt for every family × task kind."""

from __future__ import annotations

import pytest

from pytest_uiground.geometry import Box
from pytest_uiground.image import ImageRef
from pytest_uiground.models.parsers import FAMILIES
from pytest_uiground.models.prompts import _PROMPTS, prompt_for
from pytest_uiground.sample import TASK_KINDS, Sample, Target

# Copied from the AutomotiveUI card's ``preprocess_prompt_elam`` (seed 000, lines 105-112).
CARD_TEST_ACTION = "Identify and point to the UI element that corresponds to this test action:\n{user_request}"
CARD_EXPECTED_RESULT = (
    "Evaluate this statement about the image:\n'{user_request}'\nThink step by step, conclude whether the "
    "evaluation is 'PASSED' or 'FAILED' and point to the UI element that corresponds to this evaluation."
)


def sample(task: str, instruction: str = "Tap the Navigation icon") -> Sample:
    return Sample("s1", ImageRef.from_path("x.png"), instruction, task, Target(box=Box(0, 0, 1, 1)))  # type: ignore[arg-type]


def test_elam_prompts_equal_the_card() -> None:
    action = "Open the climate menu {with braces}"
    statement = "The seat heating is shown as 'on'"
    assert prompt_for("elam", sample("point", action)) == CARD_TEST_ACTION.format(user_request=action)
    assert prompt_for("elam", sample("verdict", statement)) == CARD_EXPECTED_RESULT.format(user_request=statement)


def test_molmo_points_natively_and_uses_the_card_verdict_prompt() -> None:
    assert prompt_for("molmo", sample("point", "the Save button")) == "Point to the Save button"
    assert prompt_for("molmo", sample("verdict", "X")) == CARD_EXPECTED_RESULT.format(user_request="X")


def test_tinyclick_is_lowercased_command_template() -> None:
    got = prompt_for("tinyclick", sample("point", "Click the SAVE Button"))
    assert got == "what to do to execute the command? click the save button"


def test_uground_uses_the_card_template() -> None:
    got = prompt_for("uground", sample("point", "the gear icon"))
    assert got.startswith("Your task is to help the user identify the precise coordinates (x, y)")
    assert got.endswith("Description: the gear icon\n\nAnswer:")


def test_uitars_asks_for_a_start_box_click() -> None:
    got = prompt_for("uitars", sample("point", "open settings"))
    assert got.startswith("You are a GUI agent.")
    assert "click(start_box='<|box_start|>(x1,y1)<|box_end|>')" in got
    assert got.endswith("## User Instruction\nopen settings")


def test_qwen_families_ask_for_point_2d_json() -> None:
    for family in ("qwen-vl", "qwen3-vl"):
        assert '"point_2d"' in prompt_for(family, sample("point"))
        assert '"point_2d"' in prompt_for(family, sample("verdict"))


@pytest.mark.parametrize("family", [f for f in FAMILIES if f != "tinyclick"])
def test_verdict_prompts_ask_for_passed_or_failed(family: str) -> None:
    got = prompt_for(family, sample("verdict", "The radio shows FM 101.1"))
    assert "'PASSED' or 'FAILED'" in got and "The radio shows FM 101.1" in got


def test_option_prompt_asks_for_the_letter_only() -> None:
    question = "Which screen is this?\nA. Rings\nB. Summary"
    got = prompt_for("qwen3-vl", sample("option", question))
    assert got.startswith(question) and "letter" in got


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("task", TASK_KINDS)
def test_every_family_and_task_contains_the_instruction(family: str, task: str) -> None:
    instruction = "Select the Media tab"
    got = prompt_for(family, sample(task, instruction))
    assert got.strip()
    # TinyClick's template legitimately lowercases everything.
    assert (instruction.lower() if family == "tinyclick" else instruction) in got


def test_prompts_and_parsers_cover_the_same_families() -> None:
    assert set(_PROMPTS) == set(FAMILIES)


def test_unknown_family_lists_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown model family 'elma'; known: elam, molmo"):
        prompt_for("elma", sample("point"))


def test_unknown_task_kind() -> None:
    with pytest.raises(ValueError, match="unknown task kind"):
        prompt_for("elam", sample("click"))
