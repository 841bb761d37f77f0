"""OSWorld-G (xlang-ai, arXiv 2505.13227): desktop grounding with boxes, polygons and refusals."""
