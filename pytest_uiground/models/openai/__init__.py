"""``--model openai`` and the ``openai`` judge's transport: any OpenAI-compatible chat server.

:mod:`.client` is the model adapter (what is sent, in which order, and how it is read);
:mod:`.http` how it is sent (the retry policy, the lazy SDK client); :mod:`.wire` what travels
(images, sizes, responses, addresses); :mod:`.settings` the options and the key; :mod:`.png` the
fast PNG encoder for images that exist only as pixels. The ``openai`` judge uses
:class:`.http.ChatPoster` and :mod:`.settings` by their public names. Importing this package
imports none of them, and none imports the ``openai`` SDK before a request.
"""
