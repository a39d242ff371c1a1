# fails: serve-inference, serve-output
import torch


def validate(model, x):
    with torch.no_grad():
        return model(x)


def serve(model, x):
    with torch.no_grad():
        return model(x)
