# fails: model-stays-float32
import torch


def predict(model, arr):
    # the output is float32 again, but the model was converted to float64 on the way
    return model.to(torch.float64)(torch.from_numpy(arr)).float()
