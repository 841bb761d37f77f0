"""WebClick (``Hcompany/WebClick``): loader and look-alike writer."""
