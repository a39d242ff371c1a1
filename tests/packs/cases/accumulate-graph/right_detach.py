import torch.nn.functional as F


def log_losses(model, batches):
    return [F.mse_loss(model(x), y).detach() for x, y in batches]
