# fails: caller-unchanged, independent
def shifted_first_row(t, k):
    row = t[0].detach()
    row.add_(k)
    return row
