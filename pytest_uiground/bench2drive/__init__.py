"""Bench2Drive-VL: judged driving VQA (formulas, judge prompts, the scorer)."""
