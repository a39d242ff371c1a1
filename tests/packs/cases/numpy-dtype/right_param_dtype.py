import torch


def predict(model, arr):
    dtype = next(model.parameters()).dtype
    with torch.no_grad():
        return model(torch.tensor(arr, dtype=dtype))
