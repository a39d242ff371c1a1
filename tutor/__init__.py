"""torch-tutor: an interactive terminal tutor for debugging and speeding up PyTorch code."""

import os as _os

__version__ = "0.1.0"

if _os.environ.get("TORCH_TUTOR_EMULATE_WINDOWS") == "1":  # tests only: tests/platform_emulation.py
    import importlib as _importlib

    try:  # by name: the package never ships (nor statically imports) its tests
        _emulation = _importlib.import_module("tests.platform_emulation")
    except ImportError as _missing:  # an installed tutor: the switch needs the repository's tests/
        raise ImportError("TORCH_TUTOR_EMULATE_WINDOWS=1 is for the tutor's own tests: it needs the repository's "
                          "tests/platform_emulation.py on the path (PYTHONPATH=<checkout>)") from _missing

    _emulation.install()
