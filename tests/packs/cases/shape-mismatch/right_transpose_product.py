import torch


def project(x, w):
    # (w x^T)^T = x w^T
    return torch.mm(w, x.t()).t()
