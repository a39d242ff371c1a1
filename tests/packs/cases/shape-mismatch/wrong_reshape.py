# fails: values
import torch


def project(x, w):
    # reshape makes the sizes line up but scrambles which weight meets which feature
    return x @ w.reshape(w.shape[1], w.shape[0])
