# fails: output-shape, values
import torch


def project(x, w):
    # the transpose landed on x: the result is (out, batch) instead of (batch, out)
    return w @ x.T
