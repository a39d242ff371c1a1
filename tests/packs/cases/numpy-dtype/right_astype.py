import numpy as np
import torch


def predict(model, arr):
    return model(torch.from_numpy(arr.astype(np.float32)))
