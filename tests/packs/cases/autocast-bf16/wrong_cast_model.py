# fails: autocast-during, weights-float32
import torch


def run_mixed(model, x):
    return model.bfloat16()(x.bfloat16())
