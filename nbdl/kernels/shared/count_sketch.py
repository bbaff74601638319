"""_contrib_count_sketch's views (host code both devices' prepare use)."""


def sketch_views(data_shape, out_dim):
    """((rows, d), (rows, out_dim)): data and output as 2-D rows."""
    rows = 1
    for v in data_shape[:-1]:
        rows *= int(v)
    return (rows, int(data_shape[-1])), (rows, int(out_dim))
