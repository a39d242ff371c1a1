# fails: computes-the-stack
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width=16, depth=3):
        super().__init__()
        blocks = []
        for _ in range(depth):
            blocks += [nn.Linear(width, width), nn.ReLU()]
        self.body = nn.Sequential(*blocks)
        self.register_buffer("scale", torch.ones(width))

    def forward(self, x):
        return self.body(x) * self.scale
