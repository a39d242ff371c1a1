# fails: autocast-during
import copy

import torch


def run_mixed(model, x):
    # the caller's model survives, but every operator now runs in bfloat16: that is not autocast
    low = copy.deepcopy(model).to(torch.bfloat16)
    return low(x.to(torch.bfloat16))
