"""Prompts: every published prompt equals the string copied from its source (cited), and one prompt for
every family × task kind."""

from __future__ import annotations

import pytest

from pytest_uiground.models import families
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.sample import TASK_KINDS, Sample, Target

FAMILIES = families.names()


def user_text(family: str, sample: Sample, variant: str | None = None) -> str:
    """The text ``family`` asks for ``sample`` (what every adapter sends, before any suite override)."""
    return families.get(family).user_text(sample, variant)

# Copied from the AutomotiveUI card's ``preprocess_prompt_elam`` (seed 000, lines 105-112).
CARD_TEST_ACTION = "Identify and point to the UI element that corresponds to this test action:\n{user_request}"
CARD_EXPECTED_RESULT = (
    "Evaluate this statement about the image:\n'{user_request}'\nThink step by step, conclude whether the "
    "evaluation is 'PASSED' or 'FAILED' and point to the UI element that corresponds to this evaluation."
)


# bytedance/UI-TARS @582f3a7e, codes/ui_tars/prompt.py, GROUNDING_DOUBAO (lines 59-60), as the Python literal
# evaluates (its "\n" escapes and a real newline before {instruction}); MMBench-GUI models/local_uitars.py has it too.
UITARS_GROUNDING_DOUBAO = (
    "You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform the "
    "next action to complete the task. \n\n## Output Format\n\nAction: ...\n\n\n## Action Space\n"
    "click(point='<point>x1 y1</point>'')\n\n## User Instruction\n{instruction}"
)
# OSU-NLP-Group/UGround @3a9b9f2b, grounding/uground_qwen2vl_serve.py, format_openai_template (lines 34-43): the
# f-string's text, which opens with a newline.
UGROUND_SERVE = """
Your task is to help the user identify the precise coordinates (x, y) of a specific area/element/object on the screen based on a description.

- Your response should aim to point to the center or a representative point within the described area/element/object as accurately as possible.
- If the description is unclear or ambiguous, infer the most relevant area or element based on its likely context or purpose.
- Your answer should be a single string (x, y) corresponding to the point of the interest.

Description: {description}

Answer:"""  # noqa: E501


def tinyclick_reference(text: str) -> str:
    """SamsungLabs/TinyClick @f0ab94d1, tinyclick_utils.py, prepare_inputs (line 9)."""
    return ("What to do to execute the command? " + text.strip()).lower()


def sample(task: str, instruction: str = "Tap the Navigation icon") -> Sample:
    return Sample("s1", ImageRef.from_path("x.png"), instruction, task, Target(box=Box(0, 0, 1, 1)))  # type: ignore[arg-type]


def test_elam_prompts_equal_the_card() -> None:
    action = "Open the climate menu {with braces}"
    statement = "The seat heating is shown as 'on'"
    assert user_text("elam", sample("point", action)) == CARD_TEST_ACTION.format(user_request=action)
    assert user_text("elam", sample("verdict", statement)) == CARD_EXPECTED_RESULT.format(user_request=statement)


def test_molmo_points_natively_and_uses_the_card_verdict_prompt() -> None:
    assert user_text("molmo", sample("point", "the Save button")) == "Point to the Save button"
    assert user_text("molmo", sample("verdict", "X")) == CARD_EXPECTED_RESULT.format(user_request="X")


def test_tinyclick_is_lowercased_command_template() -> None:
    got = user_text("tinyclick", sample("point", "Click the SAVE Button"))
    assert got == "what to do to execute the command? click the save button"


@pytest.mark.parametrize("command", ["  Click OK  ", "Click the SAVE Button", "\ttap\n", "Öffnen Sie das Menü"])
def test_tinyclick_equals_its_reference_and_strips_the_command(command: str) -> None:
    for task in ("point", "detect", "verdict"):
        assert user_text("tinyclick", sample(task, command)) == tinyclick_reference(command)
    assert user_text("tinyclick", sample("point", "  Click OK  ")) == "what to do to execute the command? click ok"


@pytest.mark.parametrize("instruction", ["the gear icon", "  spaces kept  ", "braces {x} and 'quotes'"])
def test_uground_equals_the_serve_script_prompt(instruction: str) -> None:
    got = user_text("uground", sample("point", instruction))
    assert got == UGROUND_SERVE.format(description=instruction)
    assert got.startswith("\nYour task is")  # the leading newline is part of it


@pytest.mark.parametrize("instruction", ["open settings", "  Spaces kept  ", "braces {x} and 'quotes'"])
def test_uitars_equals_grounding_doubao(instruction: str) -> None:
    got = user_text("uitars", sample("point", instruction))
    assert got == UITARS_GROUNDING_DOUBAO.format(instruction=instruction)
    # the two details a retyped copy loses: the space before the blank line, the doubled quote
    assert "complete the task. \n\n## Output Format" in got and "</point>'')" in got


def test_uitars_verdict_reuses_the_official_header_and_action() -> None:
    got = user_text("uitars", sample("verdict", "The radio shows FM"))
    header = UITARS_GROUNDING_DOUBAO.split("## Output Format")[0]
    assert got.startswith(header) and "click(point='<point>x1 y1</point>'')" in got


def test_qwen_families_ask_for_point_2d_json() -> None:
    assert '"point_2d"' in user_text("qwen-vl", sample("point"))
    for family in ("qwen-vl", "qwen3-vl"):
        assert '"point_2d"' in user_text(family, sample("verdict"))
    # Qwen3-VL grounds with its cookbook's computer_use tool: the instruction alone, after the tool's system text
    qwen3 = families.get("qwen3-vl").prompt("point")
    assert user_text("qwen3-vl", sample("point")) == "Tap the Navigation icon"
    assert qwen3.system is not None and '"name": "computer_use"' in qwen3.system


@pytest.mark.parametrize("family", [f for f in FAMILIES if "verdict" in families.get(f).prompts and f != "tinyclick"])
def test_verdict_prompts_ask_for_passed_or_failed(family: str) -> None:
    got = user_text(family, sample("verdict", "The radio shows FM 101.1"))
    assert "'PASSED' or 'FAILED'" in got and "The radio shows FM 101.1" in got


def test_option_prompt_asks_for_the_letter_only() -> None:
    question = "Which screen is this?\nA. Rings\nB. Summary"
    got = user_text("qwen3-vl", sample("option", question))
    assert got.startswith(question) and "letter" in got


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("task", TASK_KINDS)
def test_every_family_and_task_contains_the_instruction(family: str, task: str) -> None:
    instruction = "Select the Media tab"
    got = user_text(family, sample(task, instruction))
    assert got.strip()
    # TinyClick's template legitimately lowercases everything.
    assert (instruction.lower() if family == "tinyclick" else instruction) in got


def test_prompts_and_parsers_cover_the_same_families() -> None:
    assert all(families.get(f).prompts.get("point") is not None for f in FAMILIES)


def test_unknown_family_lists_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown model family 'elma'; known: elam, molmo"):
        user_text("elma", sample("point"))


def test_unknown_task_kind() -> None:
    with pytest.raises(ValueError, match="unknown task kind"):
        user_text("elam", sample("click"))
