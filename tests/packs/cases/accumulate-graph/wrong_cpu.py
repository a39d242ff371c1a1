# fails: no-graph, memory-flat
import torch.nn.functional as F


def log_losses(model, batches):
    logged = []
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        logged.append(loss.cpu())  # moving a tensor keeps its history
        del loss
    return logged
