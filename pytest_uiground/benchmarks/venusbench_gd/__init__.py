"""VenusBench-GD (inclusionAI, arXiv 2512.16501): bilingual web/mobile/desktop grounding, basic and advanced
tasks, with refusal samples."""
