# fails: training-restored
import torch


def evaluate(net, z):
    net.eval()
    with torch.no_grad():
        out = net(z)
    net.training = True  # only the top module's flag: Dropout and BatchNorm stay in eval mode
    return out
