import torch.nn.functional as F


def log_losses(model, batches):
    logged = []
    for x, y in batches:
        logged.append(float(F.mse_loss(model(x), y)))
    return logged
