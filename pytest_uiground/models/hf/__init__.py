"""Local Hugging Face models: weights loaded with transformers on this worker's device.

:mod:`.loading` says where a checkpoint comes from and how it is loaded (path, dtype, revision,
remote code; shared with the ``hf`` judge), :mod:`.device` which GPU this worker uses,
:mod:`.vision` is the adapter base every native image-text-to-text model shares, and the
checkpoints follow by architecture: :mod:`.qwen` (every Qwen-VL-based family), :mod:`.florence`
(TinyClick), :mod:`.molmo` (Molmo v1 and ELAM through their remote code). Importing this package
imports none of them, and none imports torch or transformers before a model is built.
"""
