# fails: autocast-during
# passes: autocast-off-after, weights-float32
import torch


def run_mixed(model, x):
    # autocast for the wrong device: CPU operators are not lowered
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return model(x)
