"""The tutor in a browser: ``torch-tutor serve`` (one app process per tab, through textual-serve)
and the Jupyter server launcher. Nothing here imports the app, the sandbox or torch: each tab's
app is a process of its own, started with the ``torch-tutor`` command line."""
