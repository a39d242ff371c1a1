import torch


def run_mixed(model, x):
    # on the CPU, autocast's default lower dtype is bfloat16
    with torch.autocast(device_type="cpu"):
        return model(x)
