import torch


def evaluate(net, z):
    mode = net.training
    net.train(False)
    with torch.inference_mode():
        out = net(z)
    net.train(mode)
    return out
