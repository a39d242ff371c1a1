import torch


def predict(model, arr):
    return model(torch.from_numpy(arr).float())
