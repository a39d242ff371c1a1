# fails: no-graph, memory-flat
import torch.nn.functional as F


def log_losses(model, batches):
    # a clone is a copy that stays in the graph
    return [F.mse_loss(model(x), y).clone() for x, y in batches]
