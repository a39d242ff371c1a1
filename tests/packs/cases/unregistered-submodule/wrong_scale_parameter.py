# fails: scale-is-buffer
# passes: layers-registered, layers-registered-any-depth
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width=16, depth=3):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        # registered, but as a parameter: the optimizer and parameter counts see it
        self.scale = nn.Parameter(torch.ones(width), requires_grad=False)

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            if i > 0:
                x = torch.relu(x)
            x = layer(x)
        return x * self.scale
