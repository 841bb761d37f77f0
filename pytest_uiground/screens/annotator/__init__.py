"""The browser annotator: ``python -m pytest_uiground annotate`` (cli), its server and page, and its store
(the page's edits of ``annotations.jsonl``, checked and given ids by the one format module, ``screens/format.py``)."""
