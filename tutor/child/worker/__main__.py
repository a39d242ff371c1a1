"""``python -m tutor.child.worker CONFIG``: start a warm worker (see ``serve.main``)."""

import os
import sys

from tutor.child.worker.loop import main

if __name__ == "__main__":
    code = main()
    # Leave without the interpreter's teardown: unloading torch took about a second, which every
    # quit of the app waited for. Nothing of the worker's needs finalising (the parent removes
    # the scratch folders; runs are over).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
