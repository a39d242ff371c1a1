# fails: output-dtype
import torch


def predict(model, arr):
    # returns a NumPy array, not a tensor
    return model(torch.from_numpy(arr).float()).detach().numpy()
