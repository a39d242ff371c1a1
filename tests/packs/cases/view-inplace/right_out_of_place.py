def shifted_first_row(t, k):
    return t[0] + k
