"""torch-tutor: an interactive terminal tutor for debugging and speeding up PyTorch code."""

__version__ = "0.1.0"
