"""PLACEHOLDER: being written now; replace this whole file."""


def argmax(*args, **kwargs):
    raise NotImplementedError('argmax is being written')


def argmin(*args, **kwargs):
    raise NotImplementedError('argmin is being written')


def cumulative(*args, **kwargs):
    raise NotImplementedError('cumulative is being written')


def reduce_and(*args, **kwargs):
    raise NotImplementedError('reduce_and is being written')


def reduce_max(*args, **kwargs):
    raise NotImplementedError('reduce_max is being written')


def reduce_min(*args, **kwargs):
    raise NotImplementedError('reduce_min is being written')


def reduce_or(*args, **kwargs):
    raise NotImplementedError('reduce_or is being written')


def reduce_prod(*args, **kwargs):
    raise NotImplementedError('reduce_prod is being written')


def reduce_sum(*args, **kwargs):
    raise NotImplementedError('reduce_sum is being written')


