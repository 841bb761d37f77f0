"""How a sample is scored: the suite's scorer (a rule or a judged scorer) and the built-in rules.
"""
