"""What the tutor says: the UI's words in each language, the check engine's sentences, and text
from elsewhere made safe to show (safe_text.py).

A leaf: imports nothing of the tutor, so every side may import it, the child side included.
"""
