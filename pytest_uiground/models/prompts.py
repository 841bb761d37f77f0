"""Prompts: the text each model family is asked, per task kind.

Prompt wording moves grounding scores by several points, so a published number only
reproduces with the prompt it was measured with. Where a model card or reference
script publishes a prompt it is copied verbatim and says where from; everything else
is the project's own wording and is marked "project wording" so that nobody mistakes
it for the model author's. Each family's prompt asks for the coordinate form that
:mod:`pytest_uiground.models.parsers` reads for that family. :data:`MAX_NEW_TOKENS` holds
each family's answer length, from the same official code where it sets one, because a
limit that cuts a "think step by step" answer before its point changes the score too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pytest_uiground.models.parsers import FAMILIES
from pytest_uiground.record.sample import TASK_KINDS, Sample

# --- published templates (verbatim) --------------------------------------------------


def elam_point(instruction: str) -> str:
    """AutomotiveUI card, ``preprocess_prompt_elam`` for "Test Action" rows (verbatim)."""
    return f"Identify and point to the UI element that corresponds to this test action:\n{instruction}"


def elam_verdict(statement: str) -> str:
    """AutomotiveUI card, ``preprocess_prompt_elam`` for "Expected Result" rows (verbatim)."""
    return (
        f"Evaluate this statement about the image:\n'{statement}'\nThink step by step, conclude whether the "
        "evaluation is 'PASSED' or 'FAILED' and point to the UI element that corresponds to this evaluation."
    )


def molmo_point(instruction: str) -> str:
    """Molmo's native pointing request ("Point to ..."), followed by the instruction as given.

    The card does not say which prompt its Molmo-7B-D row used; to compare with that
    row, prompt Molmo with :func:`elam_point` instead.
    """
    return f"Point to {instruction}"


def uground_point(instruction: str) -> str:
    """UGround-V1's grounding prompt, verbatim with its leading newline.

    Source: OSU-NLP-Group/UGround ``grounding/uground_qwen2vl_serve.py`` ``format_openai_template``
    (an f-string that opens with a newline), the API mode whose scores the UGround README reports.
    It does not state the 0..1000 range: UGround (Qwen2-VL) answers in it by training. The
    newline matters: it is a token between ``<|vision_end|>`` and the text.
    """
    return (
        "\nYour task is to help the user identify the precise coordinates (x, y) of a specific "
        "area/element/object on the screen based on a description.\n\n"
        "- Your response should aim to point to the center or a representative point within the described "
        "area/element/object as accurately as possible.\n"
        "- If the description is unclear or ambiguous, infer the most relevant area or element based on its "
        "likely context or purpose.\n"
        "- Your answer should be a single string (x, y) corresponding to the point of the interest.\n\n"
        f"Description: {instruction}\n\nAnswer:"
    )


UITARS_GROUNDING = (
    "You are a GUI agent. You are given a task and your action history, with screenshots. You need to perform "
    "the next action to complete the task. \n\n## Output Format\n\nAction: ...\n\n\n## Action Space\n"
    "click(point='<point>x1 y1</point>'')\n\n## User Instruction\n{instruction}"
)
"""bytedance/UI-TARS ``codes/ui_tars/prompt.py`` ``GROUNDING_DOUBAO``, verbatim (also MMBench-GUI
``models/local_uitars.py``): note the space before ``\\n\\n## Output Format`` and the doubled closing
quote in ``</point>''``, both part of the published prompt."""
_UITARS_HEADER = UITARS_GROUNDING.split("## Output Format")[0]
_UITARS_CLICK = "click(point='<point>x1 y1</point>'')"


def uitars_point(instruction: str) -> str:
    """UI-TARS-1.5's grounding prompt (:data:`UITARS_GROUNDING`), the instruction as given (no strip).

    The answer is ``click(point='<point>x y</point>')`` in absolute pixels of the smart-resized
    input (the ``uitars`` adapter resizes with UI-TARS' own pixel limits).
    """
    return UITARS_GROUNDING.format(instruction=instruction)


def tinyclick(instruction: str) -> str:
    """TinyClick's own prompt (verbatim): the command stripped, appended and everything lowercased.

    Source: SamsungLabs/TinyClick ``tinyclick_utils.py`` ``prepare_inputs``. TinyClick has this one
    prompt for every task; for a verdict row it grounds the statement (as the card's TinyClick row
    did) and cannot give a verdict, which the parser reports as a format error.
    """
    return ("What to do to execute the command? " + instruction.strip()).lower()


# --- project wording --------------------------------------------------------------------

_QWEN_POINT_JSON = '[{"point_2d": [x, y], "label": "..."}]'


def qwen_point(instruction: str) -> str:
    """Project wording, after the Qwen2.5-VL grounding cookbook's "output ... in JSON format"."""
    return (
        f"Locate the UI element described by this instruction: {instruction}\n"
        f"Output its point coordinates in JSON format: {_QWEN_POINT_JSON}"
    )


def _evaluate(statement: str) -> str:
    return (
        f"Evaluate this statement about the screenshot:\n'{statement}'\n"
        "Conclude whether the evaluation is 'PASSED' or 'FAILED'"
    )


def uitars_verdict(statement: str) -> str:
    """Project wording in UI-TARS' grounding template (its header and action line, verbatim):
    the verdict in ``Thought``, the element as a click."""
    return (
        f"{_UITARS_HEADER}## Output Format\n\nThought: ...\nAction: ...\n\n\n## Action Space\n{_UITARS_CLICK}\n\n"
        "## Note\n- In `Thought`, conclude whether the statement is 'PASSED' or 'FAILED'.\n"
        "- In `Action`, click the UI element that corresponds to this evaluation.\n\n"
        f"## User Instruction\nEvaluate this statement about the screenshot: '{statement}'"
    )


def uground_verdict(statement: str) -> str:
    """Project wording: the verdict, then a point in UGround's own "(x, y)" answer form."""
    return (
        f"{_evaluate(statement)}, then give the precise coordinates of the UI element that corresponds to "
        "this evaluation as a single string (x, y)."
    )


def qwen_verdict(statement: str) -> str:
    """Project wording: the verdict, then a point in Qwen's JSON ``point_2d`` form."""
    return (
        f"{_evaluate(statement)} and point to the UI element that corresponds to this evaluation, "
        f"giving its coordinates in JSON format: {_QWEN_POINT_JSON}"
    )


def option(instruction: str) -> str:
    """Project wording (the common multiple-choice suffix of VLM evaluation kits).

    The instruction already holds the question and the lettered options.
    """
    return f"{instruction}\nAnswer with the option's letter from the given choices directly."


def answer(instruction: str) -> str:
    """Project wording: a short free-text answer, which normalized exact match can score."""
    return f"{instruction}\nAnswer the question briefly, using a single word or phrase."


def vqa(instruction: str) -> str:
    """Free-text questions (driving VQA): the question as asked; a judge reads the answer."""
    return instruction


# --- how long an answer each family may be ----------------------------------------------


@dataclass(frozen=True)
class Limit:
    """A family's default ``max_new_tokens`` (``None``: the checkpoint's generation_config decides)
    and where the number comes from; ``--uiground-max-new-tokens`` replaces it."""

    max_new_tokens: int | None
    source: str


MAX_NEW_TOKENS: dict[str, Limit] = {
    "elam": Limit(2048, "ELAM card: GenerationConfig(max_new_tokens=2048, stop_strings='<|endoftext|>')"),
    "molmo": Limit(2048, "the ELAM card's limit (ELAM-7B is a Molmo-7B-D fine-tune): step-by-step verdicts "
                         "need it"),
    "uitars": Limit(400, "bytedance/UI-TARS README_deploy.md: max_tokens=400 (MMBench-GUI's "
                         "config_local_uitars.json uses 512)"),
    "uground": Limit(256, "project: UGround's uground_qwen2vl_serve.py sets no max_tokens; its '(x, y)' "
                          "answer needs ~10 tokens"),
    "qwen-vl": Limit(256, "project: the Qwen2.5-VL README examples use 128, short for verdict prompts"),
    "qwen3-vl": Limit(256, "project: as qwen-vl"),
    "tinyclick": Limit(None, "SamsungLabs/TinyClick main.py: model.generate(**inputs) with no settings, so "
                             "the checkpoint's generation_config applies"),
}


# --- dispatch -----------------------------------------------------------------------

_Template = Callable[[str], str]
_PROMPTS: dict[str, dict[str, _Template]] = {
    "elam": {"point": elam_point, "verdict": elam_verdict},
    "molmo": {"point": molmo_point, "verdict": elam_verdict},
    "uitars": {"point": uitars_point, "verdict": uitars_verdict},
    "uground": {"point": uground_point, "verdict": uground_verdict},
    "qwen-vl": {"point": qwen_point, "verdict": qwen_verdict},
    "qwen3-vl": {"point": qwen_point, "verdict": qwen_verdict},
    "tinyclick": {"point": tinyclick, "verdict": tinyclick, "option": tinyclick, "answer": tinyclick, "vqa": tinyclick},
}
_SHARED: dict[str, _Template] = {"option": option, "answer": answer, "vqa": vqa}


def prompt_for(family: str, sample: Sample) -> str:
    """The prompt for ``sample`` (its instruction and task kind) in ``family``'s format.

    For verdict tasks ``sample.instruction`` is the statement to evaluate.
    """
    templates = _PROMPTS.get(family)
    if templates is None:
        raise ValueError(f"unknown model family {family!r}; known: {', '.join(FAMILIES)}")
    # A detection sample is grounded like a pointing one: the instruction names the element.
    task = "point" if sample.task == "detect" else sample.task
    template = templates.get(task) or _SHARED.get(task)
    if template is None:
        known = ", ".join(TASK_KINDS)
        raise ValueError(f"sample {sample.id!r}: unknown task kind {sample.task!r}; known: {known}")
    return template(sample.instruction)
