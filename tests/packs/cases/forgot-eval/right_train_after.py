import torch


def evaluate(net, z):
    net.eval()
    with torch.no_grad():
        predictions = net(z)
    net.train()
    return predictions
