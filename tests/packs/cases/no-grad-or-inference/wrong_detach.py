# fails: validate-grad-off
# passes: validate-restores-mode, validate-not-inference
import torch


def validate(model, x):
    # the graph is built during the forward and only dropped afterwards
    return model(x).detach()


def serve(model, x):
    with torch.inference_mode():
        return model(x)
