# fails: autocast-during
import torch


def run_mixed(model, x):
    with torch.autocast("cpu", dtype=torch.float16):
        return model(x)
