import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width=16, depth=3):
        super().__init__()
        self.depth = depth
        for i in range(depth):
            self.add_module(f"layer{i}", nn.Linear(width, width))
        self.register_buffer("scale", torch.ones(width), persistent=False)

    def forward(self, x):
        for i in range(self.depth):
            if i > 0:
                x = torch.relu(x)
            x = getattr(self, f"layer{i}")(x)
        return x * self.scale
