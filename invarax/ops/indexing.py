"""PLACEHOLDER: being written now; replace this whole file."""


def GatherScatterMode(*args, **kwargs):
    raise NotImplementedError('GatherScatterMode is being written')


def dynamic_slice(*args, **kwargs):
    raise NotImplementedError('dynamic_slice is being written')


def dynamic_update_slice(*args, **kwargs):
    raise NotImplementedError('dynamic_update_slice is being written')


def gather(*args, **kwargs):
    raise NotImplementedError('gather is being written')


def scatter(*args, **kwargs):
    raise NotImplementedError('scatter is being written')


def scatter_add(*args, **kwargs):
    raise NotImplementedError('scatter_add is being written')


def scatter_max(*args, **kwargs):
    raise NotImplementedError('scatter_max is being written')


def scatter_min(*args, **kwargs):
    raise NotImplementedError('scatter_min is being written')


def scatter_mul(*args, **kwargs):
    raise NotImplementedError('scatter_mul is being written')


