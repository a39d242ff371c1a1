# fails: values
import torch


def project(x, w):
    # .view with swapped sizes is not a transpose either
    return x @ w.view(w.shape[1], -1)
