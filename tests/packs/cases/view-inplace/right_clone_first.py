def shifted_first_row(t, k):
    row = t[0].clone()
    row += k
    return row
