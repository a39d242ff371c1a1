import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width=16, depth=3):
        super().__init__()
        blocks = []
        for i in range(depth):
            if i > 0:
                blocks.append(nn.ReLU())
            blocks.append(nn.Linear(width, width))
        self.body = nn.Sequential(*blocks)
        self.register_buffer("scale", torch.ones(width), persistent=True)

    def forward(self, x):
        return self.body(x) * self.scale
