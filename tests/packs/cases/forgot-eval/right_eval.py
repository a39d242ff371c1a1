def evaluate(net, z):
    net.eval()
    return net(z)
