# fails: validate-restores-mode
# quiet: validate-grad-off, validate-not-inference, validate-usable-later
import torch


def validate(model, x):
    torch.set_grad_enabled(False)  # never switched back on
    return model(x)


def serve(model, x):
    with torch.inference_mode():
        return model(x)
