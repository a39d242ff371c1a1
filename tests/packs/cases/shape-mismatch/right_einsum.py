import torch


def project(x, w):
    return torch.einsum("bi,oi->bo", x, w)
