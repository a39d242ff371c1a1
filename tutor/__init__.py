"""torch-tutor: an interactive terminal tutor for debugging and speeding up PyTorch code."""

import os as _os

__version__ = "0.1.0"

if _os.environ.get("TORCH_TUTOR_EMULATE_WINDOWS") == "1":  # tests only: tutor/platform_emulation.py
    from tutor import platform_emulation as _emulation

    _emulation.install()
