# fails: matches-eval-mode, statistics-unchanged
import torch
import torch.nn as nn


def evaluate(net, z):
    # only the Dropout layers switched: BatchNorm still uses batch statistics
    for module in net.modules():
        if isinstance(module, nn.Dropout):
            module.eval()
    with torch.no_grad():
        return net(z)
