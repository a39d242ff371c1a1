# fails: same-every-call, matches-eval-mode, statistics-unchanged
import torch


def evaluate(net, z):
    with torch.no_grad():
        return net(z)
