"""The browser annotator: ``python -m pytest_uiground annotate`` (cli), its server and page, and the
one module that reads and writes ``annotations.jsonl`` (store)."""
