# fails: validate-not-inference, validate-values, validate-usable-later
# passes: validate-restores-mode, validate-grad-off
import torch


def validate(model, x):
    with torch.inference_mode():
        return model(x)


def serve(model, x):
    with torch.inference_mode():
        return model(x)
