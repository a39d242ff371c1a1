# fails: autocast-off-after
# quiet: autocast-during
import torch


def run_mixed(model, x):
    ctx = torch.autocast("cpu", dtype=torch.bfloat16)
    ctx.__enter__()  # entered, never exited: autocast stays on for the caller
    return model(x)
