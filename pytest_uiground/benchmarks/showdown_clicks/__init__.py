"""Showdown-clicks (``generalagents/showdown-clicks``, dev split): loader, scorer and look-alike writer."""
