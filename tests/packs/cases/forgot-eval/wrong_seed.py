# fails: matches-eval-mode, statistics-unchanged
import torch


def evaluate(net, z):
    # the same dropout mask every call: repeatable, but still training-mode numbers
    torch.manual_seed(0)
    with torch.no_grad():
        return net(z)
