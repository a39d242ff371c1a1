"""The user's settings (config.py), the tutor's folders (paths.py) and their modes (private.py)."""
