# fails: caller-unchanged, independent
def shifted_first_row(t, k):
    # reshape returns a view whenever it can, so this still writes into t
    row = t[0].reshape(-1)
    row += k
    return row
