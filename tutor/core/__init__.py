"""The domain layer: pack models, loading, discovery, settings and progress.

Nothing here imports textual or torch; a test keeps it that way.
"""
