"""Messy raw model outputs, per benchmark, for parity tests (reference vs project).

Each list holds ``(case_id, text)`` pairs; ``*_TEXTS`` are the bare strings. The coordinate
conventions are those of the family each reference parser is written for:

* ``L1_CASES``: MMBench-GUI L1 answers (any model), read by ``parser_answers_into_option``.
* ``L2_UITARS_CASES``: UI-TARS answers for a 1280x720 image, i.e. absolute pixels of the
  smart-resized 1288x728 input (MMBench-GUI ``models/local_uitars.py``).
* ``PRO_QWEN2VL_CASES``: Qwen2-VL answers in 0..1000 (ScreenSpot-Pro ``models/qwen2vl.py``).
* ``V2_SEECLICK_CASES``: SeeClick answers, 0..1 floats or ``<box>`` in 0..1000
  (SeeClick ``pretrain/screenspot_test.py``).
"""

from __future__ import annotations

L1_CASES: list[tuple[str, str]] = [
    ("bare_upper", "C"),
    ("bare_lower", "c"),
    ("letter_dot", "B."),
    ("letter_colon_text", "D: the settings page"),
    ("letter_paren", "(E)"),
    ("letter_close_paren", "A) It's a sub-screen"),
    ("based_on_sentence", "Based on the screen, the answer is C"),
    ("based_on_sentence_dot", "Based on the screen, the answer is C."),
    ("option_lower", "Option b"),
    ("option_upper", "Option D is correct."),
    ("answer_colon", "Answer: E"),
    ("answer_colon_lower", "answer: f"),
    ("answer_fullwidth_colon", "Answer：A"),
    ("answer_is", "The answer is B"),
    ("correct_answer_is_paren", "The correct answer is (D)."),
    ("quoted", "I pick 'C' here"),
    ("double_quoted", 'My choice: "E"'),
    ("boxed", "\\boxed{B}"),
    ("think_then_letter", "<think>A looks wrong, maybe B. No.</think>\nC"),
    ("think_unclosed", "<think>The options are A. foo and B. bar; I need to check"),
    ("echo_options", "A. Home\nB. Settings\nC. Profile\nThe answer is B"),
    ("clicking_sentence", "Clicking the gear opens settings, so D"),
    ("article_a", "This is a settings screen; I choose B"),
    ("empty", ""),
    ("whitespace", "   \n  "),
    ("truncated", "The correct option is"),
    ("letter_g", "G"),
    ("two_letters", "A or B"),
    ("markdown_bold", "**Answer:** C"),
    ("final_answer_line", "Reasoning about the bar.\nFinal answer: D"),
    ("leading_spaces_letter", "   f"),
    ("number_only", "3"),
    ("chinese_answer", "答案是 C"),
    ("letter_then_word", "E is the best choice"),
    ("each_line_word", "Either way\nAnswer: B"),
]

# UI-TARS on a 1280x720 screenshot: smart_resize -> 1288 x 728 (w x h).
L2_UITARS_CASES: list[tuple[str, str]] = [
    ("action_start_box", "Action: click(start_box='<|box_start|>(644,364)<|box_end|>')"),
    ("action_point_tag", "Action: click(point='<point>644 364</point>')"),
    ("bare_pair", "(644,364)"),
    ("bare_pair_spaces", "( 644 , 364 )"),
    ("edge_top_left", "(0,0)"),
    ("edge_bottom_right", "(1288,728)"),
    ("beyond_input", "(1300,700)"),
    ("original_pixels", "(1280,720)"),
    ("way_beyond", "(2576,1456)"),
    ("relative_1000", "(1001,500)"),
    ("decimal", "(644.5,364.2)"),
    ("negative", "(-10,364)"),
    ("three_numbers", "(644,364,1)"),
    ("box_four", "<|box_start|>(100,100),(200,200)<|box_end|>"),
    ("two_points", "click(644,364) or click(100,100)"),
    ("thought_with_number", "Thought: the 2nd button.\nAction: click(start_box='<|box_start|>(644,364)<|box_end|>')"),
    ("thought_no_number", "Thought: the settings gear.\nAction: click(start_box='(1200,40)')"),
    ("think_block", "<think>look near 10, 20</think>(644,364)"),
    ("empty", ""),
    ("no_numbers", "I cannot find it."),
    ("truncated", "Action: click(start_box='<|box_start|>(644,"),
    ("one_number", "x=644"),
    ("normalized_floats", "(0.5,0.5)"),
    ("zero_one_ints", "(1,1)"),
    ("json_point", '{"point_2d": [644, 364]}'),
    ("x_y_labels", "x: 644, y: 364"),
    ("square_brackets", "[644, 364]"),
    ("newline_sep", "644\n364"),
    ("model_name_digits", "UI-TARS-1.5 says (644,364)"),
    ("huge", "(99999,99999)"),
    ("y_only_beyond", "(10,800)"),
    ("x_beyond_y_in", "(1400,10)"),
]

# Qwen2-VL family, relative 0..1000.
PRO_QWEN2VL_CASES: list[tuple[str, str]] = [
    ("box_tags", "<|box_start|>(100,100),(200,200)<|box_end|>"),
    ("box_tags_ref", "<|object_ref_start|>the button<|object_ref_end|><|box_start|>(12,34),(56,78)<|box_end|>"),
    ("two_boxes_last_wins", "<|box_start|>(0,0),(10,10)<|box_end|> then <|box_start|>(500,500),(600,600)<|box_end|>"),
    ("box_tags_spaces", "<|box_start|>(100, 100), (200, 200)<|box_end|>"),
    ("box_tags_decimals", "<|box_start|>(100.5,100),(200,200)<|box_end|>"),
    ("box_tags_point_only", "<|box_start|>(150,150)<|box_end|>"),
    ("box_start_only", "<|box_start|>(100,100),(200,200)"),
    ("bare_point", "(150,150)"),
    ("bare_point_spaces", "(150, 150)"),
    ("bare_box", "[100, 100, 200, 200]"),
    ("edge_zero", "(0,0)"),
    ("edge_1000", "(1000,1000)"),
    ("just_beyond", "(1001,500)"),
    ("pixels_4k", "(3000,2000)"),
    ("normalized_floats", "(0.15,0.15)"),
    ("three_numbers", "(150,150,3)"),
    ("five_numbers", "1 2 3 4 5"),
    ("negative", "(-5,150)"),
    ("two_points", "(150,150) and (900,900)"),
    ("sentence_point", "The element is at (150, 150)."),
    ("sentence_with_count", "There are 2 icons; the first is at (150,150)."),
    ("think_block", "<think>candidate (10,10)</think>(150,150)"),
    ("empty", ""),
    ("no_numbers", "Target does not exist"),
    ("truncated", "<|box_start|>(100,100),(2"),
    ("json_bbox", '{"bbox_2d": [100, 100, 200, 200]}'),
    ("point_tag", "<point>150 150</point>"),
    ("trailing_dot", "(150.,150.)"),
    ("x_y_labels", "x=150, y=150"),
    ("qwen2vl_name", "Qwen2-VL: (150,150)"),
    ("huge", "(99999,99999)"),
    ("box_then_text_numbers", "<|box_start|>(100,100),(200,200)<|box_end|> (confidence 9)"),
]

# SeeClick: points 0..1 (2 decimals), or <box>(x1,y1),(x2,y2)</box> in 0..1000.
V2_SEECLICK_CASES: list[tuple[str, str]] = [
    ("point", "(0.49,0.50)"),
    ("point_spaces", "(0.49, 0.50)"),
    ("box_tag", "<box>(490,500),(510,520)</box>"),
    ("two_box_tags_first_wins", "<box>(0,0),(10,10)</box><box>(490,500),(510,520)</box>"),
    ("box_tag_spaces", "<box>(490, 500),(510, 520)</box>"),
    ("word_checkbox", "the checkbox at (0.49,0.50)"),
    ("bare_box_floats", "(0.40,0.40,0.60,0.60)"),
    ("edge_zero", "(0,0)"),
    ("edge_one", "(1,1)"),
    ("edge_one_dot", "(1.0,1.0)"),
    ("beyond_one", "(1.01,0.5)"),
    ("relative_1000", "(490,500)"),
    ("pixels", "(196,400)"),
    ("negative", "(-0.1,0.5)"),
    ("three_numbers", "(0.49,0.50,0.1)"),
    ("one_number", "0.49"),
    ("two_points", "(0.1,0.1) (0.5,0.5)"),
    ("sentence", "Click at (0.49, 0.50)."),
    ("sentence_with_count", "Step 1: (0.49,0.50)"),
    ("think_block", "<think>maybe (0.1,0.1)</think>(0.49,0.50)"),
    ("empty", ""),
    ("no_numbers", "I don't know"),
    ("truncated", "(0.49,"),
    ("percent", "(49%,50%)"),
    ("qwen_box_tags", "<|box_start|>(490,500),(510,520)<|box_end|>"),
    ("leading_dot", "(.49,.50)"),
    ("trailing_dot", "(0.49.,0.50.)"),
    ("square_brackets", "[0.49, 0.50]"),
    ("json", '{"x": 0.49, "y": 0.50}'),
    ("huge", "(999,999)"),
    ("box_word_only", "box"),
    ("box_upper_case", "BOX (0.49,0.50)"),
]

L1_TEXTS = [t for _, t in L1_CASES]
L2_UITARS_TEXTS = [t for _, t in L2_UITARS_CASES]
PRO_QWEN2VL_TEXTS = [t for _, t in PRO_QWEN2VL_CASES]
V2_SEECLICK_TEXTS = [t for _, t in V2_SEECLICK_CASES]
