import torch
import torch.nn.functional as F


def log_losses(model, batches):
    # pure logging: no graph is built in the first place
    with torch.no_grad():
        return [F.mse_loss(model(x), y) for x, y in batches]
