import torch


def run_mixed(model, x):
    with torch.amp.autocast("cpu", dtype=torch.bfloat16):
        out = model(x)
    return out
