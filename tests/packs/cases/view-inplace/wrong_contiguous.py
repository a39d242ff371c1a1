# fails: caller-unchanged, independent
def shifted_first_row(t, k):
    # .contiguous() copies only when the row is not contiguous already
    row = t[0].contiguous()
    row += k
    return row
