# fails: training-restored
def evaluate(net, z):
    # right numbers, but the net is left in eval mode: the next training step runs without dropout
    net.eval()
    return net(z)
