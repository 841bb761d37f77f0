"""The 2026 families: the authors' prompts exactly, and their outputs read as the authors' code reads them.

Each family gets real outputs (cases named ``real-...``, each with its source in a comment):
text the model actually produced, quoted from its authors' material or, where they publish
none, from a public report of a run (an issue thread, a third-party log or parser). Found so
far: Qwen3-VL 3 (the mobile cookbook's stored output and two outputs of the same cookbook pasted
in QwenLM/Qwen3-VL issue #1559), MAI-UI 3 (its own evaluation outputs), Holo1.5 4 (its
cookbooks' printed outputs, one third-party), GUI-Owl-1.5 4 (a pasted turn in MobileAgent
issue #266, three rollouts in ClawGUI's RL log), OpenCUA 3 (its README's "Expected result", two
third-party), GTA1 3 (a third-party benchmark's raw results of GTA1-7B), UI-Venus-1.5 3 (a
third-party log of a quantized 8B, two boxes written down in a third-party trace); see
``REAL_FOUND`` for where was looked.
Besides them: outputs in the official format plus messy variants (thinking first, two actions,
cut-off JSON, refusal). The expected points are written out here from the official rule
(``x / 1000``, ``x / resized width`` with the resized size worked out by hand), not computed
by the code under test. Every case is read three ways: by the family directly, through
``--model replay`` (the replay adapter) and through a loopback OpenAI-compatible server (the
openai adapter), which also checks that the request carries the official system text, user
text, image placement and image size.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from chat_server import ChatServer, Reply, image_of
from PIL import Image

from pytest_uiground.models import families
from pytest_uiground.models.families import ParseContext
from pytest_uiground.models.families.parts import IMAGE_SLOT
from pytest_uiground.models.offline.replay import ReplayModel
from pytest_uiground.models.openai.client import OpenAIChatModel
from pytest_uiground.record.geometry import Box
from pytest_uiground.record.image import ImageRef
from pytest_uiground.record.prediction import Prediction
from pytest_uiground.record.sample import Sample, Target

REFUSED = "refused"
ERROR = "error"
NEW_FAMILIES = ("qwen3-vl", "gui-owl", "ui-venus", "holo", "opencua", "mai-ui", "gta1", "gelato")


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    want: tuple[float, float] | str
    size: tuple[int, int] = (1920, 1080)
    input_size: tuple[int, int] | None = None  # a record's own model_input_size (replay)


# Sizes the families' resize rules give, worked out by hand from smart_resize's definition:
# 1920/28 = 68.6 -> 69 * 28 = 1932, 1080/28 = 38.6 -> 39 * 28 = 1092 (all under max_pixels).
R28 = (1932, 1092)
TOOL = ('<tool_call>\n{{"name": "computer_use", "arguments": {{"action": "left_click", "coordinate": [{}, {}]}}}}'
        "\n</tool_call>")
TERMINATE = ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "failure"}}'
             "\n</tool_call>")

# The mobile cookbook's screenshots (assets/agent_function_call/mobile_{en,zh}_example.png) are
# 1440x3120 (their PNG headers). Its rescale_coordinates() reads a point as round(x / 999 * w) px.
MOBILE = (1440, 3120)
PHONE = (1080, 2400)  # MobileWorld's / AndroidWorld's emulator screen
GTA1_SCREEN = (1936, 1048)

CASES: dict[str, list[Case]] = {
    "qwen3-vl": [
        # real: QwenLM/Qwen3-VL@96588727 cookbooks/mobile_agent.ipynb, cell 7 output ("English App & Query
        # with API", qwen3vl-235A22-instruct, mobile_use prompt, "Search for Musk in X ..." on
        # mobile_en_example.png 1440x3120). Official: round(447/999*1440) = round(644.32) = 644 px,
        # round(81/999*3120) = round(252.97) = 253 px.
        Case("real-cookbook-mobile-en", "Thought: To search for Musk in X, I need to click on the search bar at "
             "the top of the screen. This will allow me to type in the search query.\nAction: \"I tapped on the "
             "search bar to begin searching for Musk.\"\n<tool_call>\n{\"name\": \"mobile_use\", \"arguments\": "
             "{\"action\": \"click\", \"coordinate\": [447, 81]}}\n</tool_call>\n", (644 / 1440, 253 / 3120),
             size=MOBILE),
        # real (third-party run of the official cookbook): QwenLM/Qwen3-VL issue #1559 "Reproducing mobile
        # agent problem", "English App & Query with API" response (same screenshot and prompt as above).
        # Official: round(499/999*1440) = round(719.28) = 719 px, round(325/999*3120) = round(1015.02) = 1015 px.
        Case("real-issue1559-mobile-en", "Thought: To find Musk's profile, I need to use the search functionality. "
             "The search bar is clearly visible at the top of the screen, which is the next logical step to proceed "
             "with the search.\nAction: \"I tapped on the search bar to begin searching for Musk.\"\n<tool_call>\n"
             "{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"click\", \"coordinate\": [499, 325]}}\n"
             "</tool_call>", (719 / 1440, 1015 / 3120), size=MOBILE),
        # real (third-party run of the official cookbook): QwenLM/Qwen3-VL issue #1559, "Chinese App & Query
        # with API" response (cookbook cell 9, mobile_zh_example.png 1440x3120); an "(x, y)" in the thought too.
        # Official: round(545/999*1440) = round(785.59) = 786 px, round(359/999*3120) = round(1121.20) = 1121 px.
        Case("real-issue1559-mobile-zh", "Thought: The user wants to play the first video in the search results "
             "for Qwen-VL. The first video is titled 【通义时间】如何让Qwen2.5-VL更好地看见... and is located at "
             "coordinates (545, 359). I need to click on this video to start playing it.\nAction: \"Clicking on the "
             "first video titled 【通义时间】如何让Qwen2.5-VL更好地看见... to start playing it.\"\n<tool_call>\n"
             "{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"click\", \"coordinate\": [545, 359]}}\n"
             "</tool_call>", (786 / 1440, 1121 / 3120), size=MOBILE),
        Case("tool-call", TOOL.format(512, 300), (0.512, 0.300)),
        Case("thought-first", "Thought: the gear icon opens settings.\nAction: click it\n" + TOOL.format(88, 940),
             (0.088, 0.940)),
        Case("two-calls-first-wins", TOOL.format(100, 200) + "\n" + TOOL.format(900, 900), (0.100, 0.200)),
        Case("cut-off-json", '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", '
                             '"coordinate": [51', ERROR),
        Case("terminate", TERMINATE, REFUSED),
        Case("plain-point_2d-still-read", '[{"point_2d": [250, 750], "label": "OK"}]', (0.250, 0.750)),
        Case("type-action-no-coordinate", '<tool_call>\n{"name": "computer_use", "arguments": {"action": "type", '
                                          '"text": "hi"}}\n</tool_call>', ERROR),
    ],
    "gui-owl": [
        # real (third-party): ZJU-REAL/ClawGUI@c8b2154 opengui-rl swanlab log (blob 505556f, run 20260327_110750,
        # deleted in ea85aae), GUI-Owl-1.5-2B-Instruct (run_mobileworld.sh model_path) prompted with the
        # mobile_use tool ("resolution is 1000x1000") on a 1080x2400 MobileWorld screen; the rollout loop
        # prints batch_decode(responses, skip_special_tokens=True) one line per log entry (line breaks
        # restored). The first rollout is before any update ("Training from scratch"); the other two come
        # after one and two GiGPO steps at lr 1e-6. Official grounding reading: no "(x, y)", so the last
        # "[x, y]" in 0..1000 (a swipe's coordinate2 is that last pair).
        Case("real-clawgui-settings", "Action:  Click on the Settings icon at the bottom right to open the Settings "
             "app\n<tool_call>\n{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"click\", \"coordinate\": "
             "[857, 819]}}\n</tool_call>", (0.857, 0.819), size=PHONE),
        Case("real-clawgui-swipe-step1", "Action:  Swipe up from the bottom of the screen to open the app drawer.\n"
             "<tool_call>\n{\"name\": \"mobile_use\", \"arguments\": {\"action\": \"swipe\", "
             "\"coordinate\": [500, 500], \"coordinate2\": [500, 320]}}\n</tool_call>", (0.500, 0.320), size=PHONE),
        Case("real-clawgui-camera-step2", "Action:  点击屏幕右下角的相机图标以打开相机应用\n<tool_call>\n{\"name\": "
             "\"mobile_use\", \"arguments\": {\"action\": \"click\", \"coordinate\": [861, 920]}}\n</tool_call>",
             (0.861, 0.920), size=PHONE),
        # real (pasted by a user): X-PLUG/MobileAgent issue #266 "Owl-1.5模型的上下文问题", an assistant turn of a
        # GUI-Owl-1.5 AndroidWorld run kept in the request history (thinking first; the screen size is not
        # given: AndroidWorld's 1080x2400 assumed, the reading does not depend on it).
        Case("real-issue266-thinking", "<think>The swipe up successfully opened the app drawer, revealing all "
             "installed apps, including the Audio Recorder app in the second row. I\u2019ve accessed the app drawer, "
             "and the next step is to tap the Audio Recorder icon to launch it. Once opened, I can proceed with "
             "recording the audio clip and saving it with the name 'presentation_fGwr.m4a'. The Audio Recorder app "
             "will provide the necessary tools for this task.</think>\nAction: Click on the Audio Recorder app icon "
             "in the second row to launch the application.\n<tool_call>\n{\"name\": \"mobile_use\", \"arguments\": "
             "{\"action\": \"click\", \"coordinate\": [396, 328]}}\n</tool_call>", (0.396, 0.328), size=PHONE),
        Case("tool-call", TOOL.format(512, 300), (0.512, 0.300)),
        # the official regex takes any "(x, y)" first, even in the thinking: the last one wins
        Case("thinking-pair-wins", "I see the icon near (120, 340).</think>\n" + TOOL.format(512, 300),
             (0.120, 0.340)),
        Case("two-calls-last-wins", TOOL.format(100, 200) + "\n" + TOOL.format(900, 800), (0.900, 0.800)),
        Case("no-space-bracket-unread", '{"coordinate": [512,300]}', ERROR),
        Case("terminate", TERMINATE, REFUSED),
        Case("cut-off-json", '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", '
                             '"coordinate": [51', ERROR),
    ],
    "ui-venus": [
        # real (third-party): skspade/gui-agent-frontier@0eb5624 docs/findings.md, "Phase 10 — Coordinate
        # remapper": UI-Venus-1.5-8B (converted to GGUF, Q6_K, served by llama.cpp) given the official grounding
        # prompt with the refusal sentence on a 4800x2708 screenshot; the log prints repr() of the answer.
        Case("real-frontier-8b-llamacpp", "[466, 460]", (0.466, 0.460), size=(4800, 2708)),
        # real (third-party), as the trace's author wrote them down: OpenAdaptAI/openadapt-evals@866f32d
        # docs/traces/notepad_hello_2026_03_18/README.md, "Grounder: UI-Venus-1.5-8B (vLLM on A10G)" asked for a
        # box (UI-Venus' "Outline the position ... [x1,y1,x2,y2]" prompt) on 1280x720 Windows screens. The raw
        # strings are not kept, so their spacing is the author's; the official _parse_point reads int() of each
        # comma-separated field, which ignores it. A box reads as its centre.
        Case("real-openadapt-start-button", "[325, 943, 365, 992]", (0.345, 0.9675), size=(1280, 720)),
        Case("real-openadapt-notepad-icon", "[442, 386, 491, 472]", (0.4665, 0.429), size=(1280, 720)),
        Case("point", "[512,300]", (0.512, 0.300)),
        Case("box-centre", "[100,200,300,400]", (0.200, 0.300)),
        Case("two-points-midpoint", "[100, 200], [300, 400]", (0.200, 0.300)),
        Case("thinking-first-bracket", "The button is at [640,88] I think, or [10,10]", (0.640, 0.088)),
        Case("infeasible", "[-1,-1]", REFUSED),
        Case("decimal-unread", "[512.5, 300]", ERROR),
        Case("cut-off", "[51", ERROR),
    ],
    "holo": [
        # real: hcompai/hai-cookbook@2ba8961 holo1_5/holo_1_5_quickstart.ipynb cell 17, printed raw output of
        # Holo1.5-3B on data/calendar_example.jpg@445d201 (1710x852, its JPEG header), which the notebook resizes
        # with smart_resize (factor 28) before the processor: 1710/28 = 61.07 -> 1708, 852/28 = 30.43 -> 840.
        Case("real-cookbook-quickstart", '{"action": "click_absolute", "x": 947, "y": 338}', (947 / 1708, 338 / 840),
             size=(1710, 852)),
        # real: hai-cookbook@2ba8961 holo1_5/openai_client/invoke_localization.ipynb: x=342, y=345 on its
        # 1400x700 resized image (the cell prints the structured output parsed, ClickAbsoluteAction(
        # action='click_absolute', x=342, y=345); the JSON here carries those values in the schema's order)
        Case("real-cookbook-api", '{"action": "click_absolute", "x": 342, "y": 345}', (342 / 1400, 345 / 700),
             size=(1710, 852), input_size=(1400, 700)),
        # real: the same notebook's first version (hai-cookbook@f8f3950, 2025-09-16, cell 15): an earlier run
        # answered ClickAbsoluteAction(action='click_absolute', x=342, y=350) on the same 1400x700 image
        Case("real-cookbook-api-first-run", '{"action": "click_absolute", "x": 342, "y": 350}',
             (342 / 1400, 350 / 700), size=(1710, 852), input_size=(1400, 700)),
        # real (third-party): ZJULiHongxin/AutoGUI-v2@07649ec utils/eval_utils/autoguiv2/eval_elemgnd_mp.py, the
        # "Case 7: Holo" answer its parser quotes (Hcompany/Holo1.5-7B in its model list; the screen is not
        # given: read on a 1920x1080 screenshot, resized to 1932x1092)
        Case("real-autoguiv2-holo15-7b", '{"action": "click_absolute", "x": 1043, "y": 502}',
             (1043 / 1932, 502 / 1092)),
        Case("action-defaulted", '{"x": 966, "y": 546}', (0.5, 0.5)),
        Case("fenced-json-unread", '```json\n{"action": "click_absolute", "x": 947, "y": 338}\n```', ERROR),
        Case("cut-off-json", '{"action": "click_absolute", "x": 947, "y"', ERROR),
        Case("decimal-unread", '{"x": 947.5, "y": 338}', ERROR),
    ],
    "opencua": [
        # real: xlang-ai/OpenCUA@1d70f20 model/README.md "Expected result" (its screenshot is not published)
        Case("real-readme-expected", "```python\npyautogui.click(x=1443, y=343)\n```", (1443 / 1932, 343 / 1092)),
        # real (third-party): ZJULiHongxin/AutoGUI-v2@07649ec eval_elemgnd_mp.py and eval_osworldg_mp.py, the
        # "Case 8: OpenCUA" answer its parsers quote (xlangai/OpenCUA-7B in its model list). The screen is not
        # given and x=3167 is wider than a 1920x1080 one: read on a 3840x2160 screenshot, which OpenCUA's
        # smart_resize (factor 28, max 12,845,056) makes 3840/28 = 137.1 -> 3836 by 2160/28 = 77.1 -> 2156.
        # real (third-party): SalesforceAIResearch/SCUBA@41979f0 README.md "Serve via Ray", the printed result of
        # tests/test_ray_serve_opencua_batch.py (OpenCUA-7B per its args.py, agent prompt, temperature 0) on
        # tests/sf.png (1920x1080, its PNG header): the answer's last python block as its parser prints it
        # ('original_code': stripped, then re-wrapped in the fence; the thought is not printed). Its own
        # conversion to the screen, pyautogui.click(1769, 180) = int(1781 * 1920 / 1932), int(182 * 1080 / 1092),
        # confirms pixels of the 1932x1092 resized image.
        Case("real-scuba-code-block", "```python\npyautogui.click(x=1781, y=182)\n```", (1781 / 1932, 182 / 1092)),
        Case("real-autoguiv2-opencua-7b", "## Code:\n```python\npyautogui.click(x=3167, y=360)\n```\n",
             (3167 / 3836, 360 / 2156), size=(3840, 2160)),
        # README's coordinate-system explanations ("Example output: ..."): illustrations, not counted as real
        Case("readme-example", "pyautogui.click(x=960, y=324)", (960 / 1932, 324 / 1092)),
        Case("readme-relative", "pyautogui.click(x=0.5, y=0.3)", (0.5, 0.3)),
        Case("thought-then-code", "## Thought\nClick Save.\n## Action\nClick the Save button.\n## Code\n"
                                  "```python\npyautogui.moveTo(x=10, y=10)\npyautogui.click(x=966, y=546)\n```",
             (0.5, 0.5)),
        Case("double-click-skipped", "pyautogui.doubleClick(x=100, y=100)\npyautogui.click(x=483, y=273)",
             (0.25, 0.25)),
        Case("terminate-no-click", "computer.terminate(status='failure')", ERROR),
    ],
    "mai-ui": [
        # real: Tongyi-MAI/MAI-UI@4dd07b9 evaluation/grounding/output_server/*.jsonl: raw_response, official pred_norm
        Case("real-ssv2-desktop-240", "<grounding_think>\nThought: The instruction \"lock the memo\" corresponds to "
             "the lock icon in the top toolbar, which is used to secure the memo from editing.\n</grounding_think>\n"
             "<answer>\n{\"coordinate\":[751,41]}\n</answer>", (0.751, 0.041), size=(1268, 1310)),
        Case("real-ssv2-desktop-255", "<grounding_think>\nThought: The instruction \"show the files in list\" "
             "corresponds to selecting the \"List\" option in the dropdown menu under \"Show items as:\".\n"
             "</grounding_think>\n<answer>\n{\"coordinate\":[339,306]}\n</answer>", (0.339, 0.306),
             size=(1600, 898)),
        Case("real-sspro-macos-20-stray-brace", "<grounding_think>\nThought: The \"Clear all\" button at the top right "
             "of the Chrome Download History page is the control for this action.\n</grounding_think>\n<answer>\n"
             "{\"coordinate\":[579,550]}}\n</answer>", (0.579, 0.550), size=(2992, 1870)),
        # shortened from an OS_G.jsonl output (its thought is abridged): not counted as real
        Case("osg-space-after-colon", "<grounding_think>\nThought: the plus (+) button.\n</grounding_think>\n<answer>\n"
             "{\"coordinate\": [950,985]}\n</answer>", (0.950, 0.985), size=(1280, 720)),
        Case("thinking-bracket-first", "<grounding_think>near [10,20]</grounding_think><answer>{\"coordinate\":"
             "[300,400]}</answer>", (0.010, 0.020)),
        Case("spaced-unread", "<answer>\n{\"coordinate\": [950, 985]}\n</answer>", ERROR),
        Case("cut-off", "<answer>\n{\"coordinate\":[95", ERROR),
    ],
    "gta1": [
        # real (third-party): akbargherbal/gui_grounding_benchmark@bc50326 gui_grounding_results/raw_results.json
        # "raw_text", HelloKKMe/GTA1-7B run greedily with the model card's system prompt and resize (factor 28,
        # 3136..4096*2160) on 1936x1048 screenshots (shortlisted_screenshots/*.png headers); resized 1936/28 =
        # 69.1 -> 1932, 1048/28 = 37.4 -> 1036, which the file's own rescaled "xy" confirms (384*1936/1932 =
        # 384.795, 941*1048/1036 = 951.900).
        Case("real-benchmark-solo-button", "(384,941)", (384 / 1932, 941 / 1036), size=GTA1_SCREEN),
        Case("real-benchmark-cue-out", "(1899,719)", (1899 / 1932, 719 / 1036), size=GTA1_SCREEN),
        Case("real-benchmark-sounds", "(158,273)", (158 / 1932, 273 / 1036), size=GTA1_SCREEN),
        Case("official-form", "(966,546)", (0.5, 0.5)),
        Case("spaced", "(483, 273)", (0.25, 0.25)),
        Case("two-points-first-wins", "(100,200) then (900,900)", (100 / 1932, 200 / 1092)),
        Case("decimal-anywhere-fails", "(100,200) (1.5,2)", ERROR),
        Case("negative-stays-a-point", "(-5,10)", (-5 / 1932, 10 / 1092)),
        Case("cut-off", "(96", ERROR),
    ],
    "gelato": [
        # real: mlfoundations/Gelato@1f83dad evaluation/logs/grounding_eval_osworld-g-gelato-30b-refusal_included.json
        # (shared/data/paper-osworld-g), "response" of Gelato-30B-A3B on OSWorld-G, with the authors' own
        # "predicted_click" in pixels of the original image: 745/1000*1920 = 1430.4, 315/1000*1080 = 340.2 (record
        # 0FOB4CLBT2); 895/1000*1280 = 1145.6, 933/1000*720 = 671.76 (A7ZEJm25hP); 731/1000*1280 = 935.68,
        # 856/1000*800 = 684.8 (RH3GxAMJ2J): a float, never truncated to whole pixels.
        Case("real-log-0FOB4CLBT2", "(745, 315)", (1430.4 / 1920, 340.2 / 1080)),
        Case("real-log-A7ZEJm25hP", "(895, 933)", (1145.6 / 1280, 671.76 / 720), size=(1280, 720)),
        Case("real-log-RH3GxAMJ2J", "(731, 856)", (935.68 / 1280, 684.8 / 800), size=(1280, 800)),
        # the same log: 15 answers are exactly "refusal" (11 on refusal samples, scored right)
        Case("log-refusal", "refusal", REFUSED),
        Case("refusal-any-case-anywhere", "I cannot find it. REFUSAL.", REFUSED),
        Case("no-space", "(100,200)", (0.100, 0.200)),
        Case("first-pair-wins", "(100, 200) or (900, 900)", (0.100, 0.200)),
        Case("decimal-skipped-to-next-whole-pair", "(1.5, 2) then (300, 400)", (0.300, 0.400)),
        Case("negative-not-read", "(-5, 10)", ERROR),
        Case("square-brackets-not-read", "[500, 500]", ERROR),
        Case("beyond-1000-stays-a-point", "(1004, 10)", (1.004, 0.010)),
        Case("cut-off", "(96", ERROR),
    ],
}
# The sizes the client-resizing families send, worked out by hand (see R28 above):
# GTA1 factor 28, 3136..8,847,360 px: 1936x1048 -> 69*28 x 37*28 = 1932x1036.
# GUI-Owl factor 32, 1024..10,035,200 px: 1080x2400 -> round(33.75)=34*32 x 75*32 = 1088x2400.
# MAI-UI factor 32, 1..6553600 px: 1268x1310 -> 40*32 x 41*32; 1600x898 -> 1600x896; 2992x1870 ->
# round(93.5)=94 -> 3008 x 58*32=1856; 1280x720 -> round(22.5)=22 -> 1280x704; 1920x1080 -> 1920x1088.
SENT_SIZE: dict[str, dict[tuple[int, int], tuple[int, int]]] = {
    "mai-ui": {(1268, 1310): (1280, 1312), (1600, 898): (1600, 896), (2992, 1870): (3008, 1856),
               (1280, 720): (1280, 704), (1920, 1080): (1920, 1088)},
    "gui-owl": {(1920, 1080): (1920, 1088), PHONE: (1088, 2400)},
    "gta1": {(1920, 1080): R28, GTA1_SCREEN: (1932, 1036)},
    "holo": {(1920, 1080): R28, (1710, 852): (1708, 840)},
    # Gelato factor 32, 4096..10,000,000 px, as its logs' resized_resolution: 1920x1080 -> 1920 x round(33.75)=34*32;
    # 1280x720 -> 1280 x round(22.5)=22*32 = 704; 1280x800 -> 1280 x 25*32 = 800.
    "gelato": {(1920, 1080): (1920, 1088), (1280, 720): (1280, 704), (1280, 800): (1280, 800)},
}
INPUT_SIZE = {"holo": R28, "opencua": R28, "gta1": R28}  # pixels-resized families on 1920x1080
ALL = [(name, case) for name, cases in CASES.items() for case in cases]

# How many real outputs (``real-`` cases) each family has: issue 25 asks for at least three, and
# nothing is made up to reach it. qwen3-vl, mai-ui and holo have them from their authors' own
# material, opencua one; gui-owl, ui-venus and gta1 rest on third-party quotes only, each named where
# it is used. Looked in (2026
# snapshots): the authors' repositories at the commits named in
# shared/reference/model-families-2026.md and their whole history (READMEs, notebooks' stored outputs,
# examples/, result and log files), the Hugging Face model cards and blog posts, GitHub issue threads of
# these repositories and of ScreenSpot-Pro-GUI-Grounding, ZJU-REAL/ClawGUI (all 213 commits),
# ZJULiHongxin/AutoGUI-v2@07649ec, SalesforceAIResearch/SCUBA, VLMEvalKit, lmms-eval, trycua/cua,
# OpenAdaptAI/openadapt-evals; not searched: evalscope, xlang-ai/OSWorld (no snapshot to be had).
REAL_FOUND = {
    "qwen3-vl": 3,
    "mai-ui": 3,
    # hai-cookbook: the quickstart's printed output and two runs of the API notebook (@f8f3950, @2ba8961);
    # one third-party (AutoGUI-v2's parser comment)
    "holo": 4,
    # OpenCUA@1d70f20: only the README's "Expected result" (model/inference prints but stores none); two
    # third-party (SCUBA's README, AutoGUI-v2's parser comment). Issue #36 pastes one cut off before its y.
    "opencua": 3,
    # X-PLUG/MobileAgent@11cea57 Mobile-Agent-v3.5: cookbooks without stored outputs, no result files (the
    # v3 cookbook's stored output is GUI-Owl 1, pixels of the resized image, and a type action); issue #266
    # (one pasted turn); ZJU-REAL/ClawGUI's RL log (three rollouts of GUI-Owl-1.5-2B)
    "gui-owl": 4,
    # inclusionAI/UI-Venus (all 23 commits), its model cards, ClawGUI, AutoGUI-v2, VLMEvalKit, lmms-eval, the issue
    # threads: no UI-Venus-1.5 response from its authors; examples/grounding_result_format.json holds a
    # UI-Venus-1.0 one ("[1748,415,1769,430]", a box in pixels of the resized image, another frame). Third-party:
    # one logged answer (a quantized 8B) and two boxes of an 8B that a trace's author wrote down by hand
    "ui-venus": 3,
    # Yan98/GTA1 (all 42 commits): the README's inference snippet prints nothing stored, preprocessing/*.json
    # are training targets; model cards and blog show tables only. Three from a third-party benchmark run of
    # GTA1-7B (its raw_results.json; its context.md's "(412, 483)" is a made-up schema example, not used)
    "gta1": 3,
    # Gelato publishes its per-sample evaluation logs (mlfoundations/Gelato@1f83dad evaluation/logs/): three of
    # its OSWorld-G answers, one per screen size
    "gelato": 3,
}


def check(pred: Prediction | Any, want: tuple[float, float] | str, where: str) -> None:
    if want == REFUSED:
        assert pred.refused and pred.point is None and not pred.format_error, where
    elif want == ERROR:
        assert pred.format_error and pred.point is None and not pred.refused, where
    else:
        assert not pred.format_error and not pred.refused and pred.point is not None, where
        assert pred.point.x == pytest.approx(want[0], abs=1e-3) and pred.point.y == pytest.approx(want[1], abs=1e-3), (
            where, pred.point)


def test_each_family_quotes_its_real_outputs() -> None:
    """Issue 25: at least three real outputs per family, or every one that could be found."""
    assert set(REAL_FOUND) == set(NEW_FAMILIES) == set(CASES)
    for family, cases in CASES.items():
        real = [c for c in cases if c.id.startswith("real-")]
        assert len(real) == REAL_FOUND[family], (family, [c.id for c in real])
        assert len(real) >= min(3, REAL_FOUND[family])
        assert all(isinstance(c.want, tuple) for c in real), family  # each is read to a point
    assert all(n >= 3 for n in REAL_FOUND.values()), REAL_FOUND


def test_qwen3_vl_reads_the_mobile_tool_in_its_own_frame() -> None:
    """The mobile cookbook's ``mobile_use`` tool works on a 999x999 screen (rescale_coordinates:
    x / 999); the computer-use tool, the family's own prompt, on 1000x1000."""
    fam, ctx = families.get("qwen3-vl"), ParseContext(image_size=(1440, 3120))
    mobile = fam.parse('<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": '
                       '[999, 999]}}\n</tool_call>', "point", ctx)
    computer = fam.parse(TOOL.format(999, 999), "point", ctx)
    assert mobile.point is not None and computer.point is not None
    assert (mobile.point.x, mobile.point.y) == (1.0, 1.0) and not mobile.note
    assert (computer.point.x, computer.point.y) == pytest.approx((0.999, 0.999))


def test_every_new_family_is_registered_with_its_frame() -> None:
    frames = {name: families.get(name).frame for name in NEW_FAMILIES}
    assert frames == {"qwen3-vl": "norm1000", "gui-owl": "norm1000", "ui-venus": "norm1000",
                      "holo": "pixels-resized", "opencua": "pixels-resized", "mai-ui": "norm1000",
                      "gta1": "pixels-resized", "gelato": "norm1000"}
    assert families.get("ui-venus").refusal == "[-1,-1]" and "terminate" in families.get("gui-owl").refusal


@pytest.mark.parametrize(("family", "case"), ALL, ids=[f"{f}-{c.id}" for f, c in ALL])
def test_family_reads_as_the_authors_code(family: str, case: Case) -> None:
    fam = families.get(family)
    input_size = case.input_size or (INPUT_SIZE.get(family) if case.size == (1920, 1080) else None)
    if input_size is None and fam.needs_input_size:
        input_size = fam.input_size(case.size)
    check(fam.parse(case.text, "point", ParseContext(image_size=case.size, model_input_size=input_size)),
          case.want, case.id)


# sha256 of the official texts as copied from the authors' files (X-PLUG/MobileAgent@11cea57
# eval_grounding_benchmarks.py, inclusionAI/UI-Venus@c3a1442 eval_screenspot_pro.py, Tongyi-MAI/MAI-UI@4dd07b9
# eval_server.py, Yan98/GTA1@81f0c4c README.md, hai-cookbook@2ba8961 (pydantic's schema str), OpenCUA@1d70f20
# model/README.md, the Qwen3-VL cookbook's printed system message), with "{instruction}" where the
# instruction goes; hashed here once, outside the code under test.
OFFICIAL_SHA256 = {
    ("qwen3-vl", "system"): ("6084d16a025c374a9523958d4438e1f068c73da969aa3002415da011ff85b37c", 3886),
    ("gui-owl", "system"): ("f61895fcd0e363a052f901b82a3286c195b46fb5c2a7fbb42bf5818b9db2e753", 1559),
    ("holo", "user"): ("d1ce545f220d975595a8ab6fb5858f81734d0db6670481aa4300a1d6ceac5586", 661),
    ("ui-venus", "user"): ("00b36efb8fb15ead11cc95378e6d4a8d9a3d319f9b3d2e928965e56be4c6b59e", 292),
    ("opencua", "system"): ("20c5b335faadbf9f3fe8380440e43fc7be3ad93a37278a9eeb9684ca7966b781", 145),
    ("mai-ui", "system"): ("1771488cf5e47de522828f0bfc0dc6d947d7ea8287bf3de39b922bb356d38f79", 645),
    ("gta1", "system"): ("b7a49e56bb9cf4f8d5e4689f35f40c091b6d92ec0c4419458f496219a7807993", 314),
}


@pytest.mark.parametrize(("family", "part"), list(OFFICIAL_SHA256))
def test_prompt_text_is_the_official_text(family: str, part: str) -> None:
    prompt = families.get(family).prompt("point")
    text = prompt.system if part == "system" else prompt.user
    assert text is not None
    assert (hashlib.sha256(text.encode()).hexdigest(), len(text)) == OFFICIAL_SHA256[family, part]


def test_prompt_placement_and_instruction_rules() -> None:
    venus = families.get("ui-venus").prompt("point")
    # UI-Venus drops exactly one final "." and writes its own ". " after the instruction
    assert "\nOpen the menu. \n\nThe output" in venus.text("Open the menu.")
    assert "\nOpen the menu.. \n\nThe output" in venus.text("Open the menu..")
    mai = families.get("mai-ui").prompt("point")
    assert mai.text("Open the menu") == "Open the menu\n" and not mai.image_first  # text first, then the image
    for name in ("qwen3-vl", "gui-owl", "opencua", "gta1"):
        assert families.get(name).prompt("point").text("Open the menu") == "Open the menu"
    gta1 = families.get("gta1").prompt("point")
    assert "height 1092 and width 1932." in (gta1.system_text((1932, 1092)) or "")
    assert families.get("gui-owl").generation.max_new_tokens == 2048
    assert families.get("gta1").generation.max_new_tokens == 32


def test_resize_rules_give_the_hand_computed_sizes() -> None:
    for family, sizes in SENT_SIZE.items():
        for size, want in sizes.items():
            assert families.get(family).input_size(size) == want, (family, size)
    assert families.get("opencua").input_size((1920, 1080)) == R28
    assert families.get("ui-venus").input_size((1920, 1080)) == (1920, 1080)  # no resize rule: as it is


def _sample(family: str, case: Case, image: ImageRef | None = None) -> Sample:
    ref = image or ImageRef.from_path(f"{case.size[0]}x{case.size[1]}.png")
    return Sample(f"{family}-{case.id}", ref, f"Click the {case.id} target.", "point", Target(box=Box(0, 0, 1, 1)))


@pytest.mark.parametrize("family", list(CASES))
def test_replay_reads_every_case(family: str, tmp_path: Path) -> None:
    """``--model replay --uiground-replay-parser NAME``: the record needs only the image size;
    a pixel family's model-input size follows from its own resize rule unless the record gives one."""
    path = tmp_path / "outputs.jsonl"
    records = []
    for case in CASES[family]:
        rec: dict[str, Any] = {"sample_id": f"{family}-{case.id}", "output": case.text, "image_size": list(case.size)}
        if case.input_size is not None:
            rec["model_input_size"] = list(case.input_size)
        records.append(json.dumps(rec))
    path.write_text("\n".join(records) + "\n")
    preds = ReplayModel(path, family).predict([_sample(family, c) for c in CASES[family]])
    for case, pred in zip(CASES[family], preds, strict=True):
        assert pred.error is None, pred.error
        check(pred, case.want, case.id)
        assert pred.raw == case.text


# --- through a loopback OpenAI-compatible server ------------------------------------------------


@pytest.fixture(scope="module")
def screens(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, int], ImageRef]:
    root = tmp_path_factory.mktemp("screens")
    out = {}
    for size in {c.size for cases in CASES.values() for c in cases}:
        path = root / f"{size[0]}x{size[1]}.png"
        Image.new("RGB", size, (40, 90, 160)).save(path)
        out[size] = ImageRef.from_path(path)
    return out


@pytest.fixture
def loopback() -> Iterator[ChatServer]:
    with ChatServer() as srv:
        yield srv


def _parts(body: dict[str, Any]) -> tuple[str | None, list[str], str]:
    """(system text, the user parts' kinds in order, the user text)."""
    messages = body["messages"]
    system = messages[0]["content"] if messages[0]["role"] == "system" else None
    user = messages[-1]["content"]
    return system, [p["type"] for p in user], "".join(p.get("text", "") for p in user)


def _texts(body: dict[str, Any]) -> list[str]:
    return [p["text"] for p in body["messages"][-1]["content"] if p["type"] == "text"]


@pytest.mark.parametrize("family", list(CASES))
def test_openai_sends_the_official_prompt_and_reads_every_case(
    family: str, loopback: ChatServer, screens: dict[tuple[int, int], ImageRef]
) -> None:
    fam = families.get(family)
    by_instruction = {f"Click the {c.id} target.": c for c in CASES[family]}
    seen: list[tuple[Case, dict[str, Any]]] = []

    def answer(body: dict[str, Any]) -> Reply:
        case = next(c for i, c in by_instruction.items() if i in _parts(body)[2])
        seen.append((case, body))
        return Reply.ok(case.text)

    loopback.handler = answer
    cases = [c for c in CASES[family] if c.input_size is None]  # a server cannot be told another input size
    model = OpenAIChatModel(api_base=loopback.url, api_key="sk-test", served_model="m", parser=family,
                            max_new_tokens=fam.generation.max_new_tokens or 256, request_timeout=5.0, max_retries=0)
    try:
        preds = model.predict([_sample(family, c, screens[c.size]) for c in cases])
    finally:
        model.close()
    for case, pred in zip(cases, preds, strict=True):
        assert pred.error is None, pred.error
        check(pred, case.want, case.id)
    assert len(seen) == len(cases)
    prompt = fam.prompt("point")
    for case, body in seen:
        system, kinds, text = _parts(body)
        sent = Image.open(io.BytesIO(image_of(body))).size
        want_sent = SENT_SIZE.get(family, {}).get(case.size, case.size)
        assert sent == want_sent, (case.id, sent)
        want_system = prompt.system
        if want_system is not None:
            want_system = want_system.replace("{width}", str(sent[0])).replace("{height}", str(sent[1]))
        assert system == want_system
        if prompt.lead:  # Gelato: text, image, text
            assert kinds == ["text", "image_url", "text"]
            assert _texts(body) == prompt.text(f"Click the {case.id} target.").split(IMAGE_SLOT)
        else:
            assert kinds == (["image_url", "text"] if prompt.image_first else ["text", "image_url"])
            assert text == prompt.text(f"Click the {case.id} target.")


def test_the_parsers_reason_reaches_the_score() -> None:
    """What ``samples.jsonl`` and the report show: the reason, not just "no point"; a point beyond
    the image is a plain miss with its note; a refusal says so."""
    from pytest_uiground.models.base import to_prediction
    from pytest_uiground.scoring.rules import score_point

    sample = Sample("s", ImageRef.from_path("x.png"), "OK", "point", Target(box=Box(0.4, 0.4, 0.6, 0.6)))
    ctx = ParseContext(image_size=(1920, 1080))

    def score(family: str, text: str) -> tuple[Prediction, Any]:
        pred = to_prediction(families.get(family).parse(text, "point", ctx), text)
        return pred, score_point(sample, pred)

    pred, got = score("ui-venus", "[512.5, 300]")
    assert pred.format_error and "not integers" in got.notes["reason"] and got.notes["reason"].startswith("no point: ")
    pred, got = score("ui-venus", "[-1,-1]")
    assert pred.refused and not got.correct and got.notes["reason"].startswith("refused")
    pred, got = score("mai-ui", "[1500,500]")
    assert not pred.format_error and not got.correct and "x=1500 is beyond 1000" in got.notes["note"]
    assert Prediction.from_json(pred.to_json()) == pred and pred.to_json()["note"] == pred.note


def test_gelato_prompts_are_the_scripts_text_image_text() -> None:
    """mlfoundations/Gelato@1f83dad run_grounding_eval.py evaluate_batch: the user message is
    ``gelato_prompt + "\\n\\n"``, the image, ``"\\n" + instruction``; sha256 of the script's two
    ``gelato_prompt`` texts (+ "\\n\\n") hashed here from the file, outside the code under test."""
    fam = families.get("gelato")
    want = {None: ("f122c0d6e49ad156241ce433a2809a7718b7422edd38b9d6e73e019806f108bc", 257),
            "refusal": ("06398da34362e9501d6000a6999afb5f663d14f6954a9de7d4e3fa9a64747637", 320)}
    for variant, digest in want.items():
        prompt = fam.prompt("point", variant)
        assert (hashlib.sha256(prompt.lead.encode()).hexdigest(), len(prompt.lead)) == digest
        assert prompt.system is None
        assert prompt.text("Open the menu.").split(IMAGE_SLOT) == [prompt.lead, "\nOpen the menu."]
    assert fam.generation.max_new_tokens == 32 and fam.generation.dtype == "bfloat16"
    assert fam.resize is not None and fam.client_resize and fam.resize.resample == "lanczos"
    assert (fam.resize.factor, fam.resize.min_pixels, fam.resize.max_pixels) == (32, 4096, 10_000_000)
