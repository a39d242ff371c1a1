# fails: scale-is-buffer, moves-to-meta
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width=16, depth=3):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.scale = torch.ones(width, requires_grad=False)

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            if i > 0:
                x = torch.relu(x)
            x = layer(x)
        return x * self.scale
