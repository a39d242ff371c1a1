# Run before every puzzle's code, and by itself for the checks: the learner may use `arange`
# and `where`; the checks use the `spec_` functions (slow, obviously right, written with loops).
import torch

arange = torch.arange
where = torch.where


def spec_checkerboard(n):
    return torch.tensor([[(i + j) % 2 for j in range(n)] for i in range(n)])


def spec_interleave(a, b):
    out = []
    for x, y in zip(a.tolist(), b.tolist()):
        out += [x, y]
    return torch.tensor(out, dtype=a.dtype)
