"""A preload that starts a thread as it is imported: a runner template that loads it is no longer
one thread, and must not fork (``tutor/child/worker/template.py``)."""

import threading

threading.Thread(target=threading.Event().wait, name="left-running-by-a-preload", daemon=True).start()
