"""A preload that prints while a spare warms up: none of it may reach a learner's run's output."""

import sys

print("NOISE-FROM-WARM-UP on stdout")
print("NOISE-FROM-WARM-UP on stderr", file=sys.stderr)
sys.stdout.flush()
sys.stderr.flush()
