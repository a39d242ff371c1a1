# fails: values, no-graph
import torch.nn.functional as F


def log_losses(model, batches):
    # logs the running total instead of each loss, and the total carries every graph
    logged, running = [], 0.0
    for x, y in batches:
        running += F.mse_loss(model(x), y)
        logged.append(running)
    return logged
