"""Models that load no weights: ``ocr`` (the offline default, RapidOCR's bundled ONNX models),
``center`` (the image-centre baseline) and ``replay`` (outputs produced elsewhere, read by a
family's parser). Each is found by its entry point; importing this package imports none of them."""
