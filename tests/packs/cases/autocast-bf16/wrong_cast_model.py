# fails: autocast-during, weights-float32
# passes: autocast-off-after
import torch


def run_mixed(model, x):
    return model.bfloat16()(x.bfloat16())
