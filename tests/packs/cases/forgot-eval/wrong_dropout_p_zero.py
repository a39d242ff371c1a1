# fails: matches-eval-mode, hyperparameters-unchanged
import torch
import torch.nn as nn


def evaluate(net, z):
    for module in net.modules():
        if isinstance(module, nn.Dropout):
            module.p = 0.0
    with torch.no_grad():
        return net(z)
