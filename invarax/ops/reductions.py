"""PLACEHOLDER: being written now; replace this whole file."""


def argmax(*args, **kwargs):
    raise NotImplementedError('argmax is being written')


def argmin(*args, **kwargs):
    raise NotImplementedError('argmin is being written')


def cumlogsumexp(*args, **kwargs):
    raise NotImplementedError('cumlogsumexp is being written')


def cummax(*args, **kwargs):
    raise NotImplementedError('cummax is being written')


def cummin(*args, **kwargs):
    raise NotImplementedError('cummin is being written')


def cumprod(*args, **kwargs):
    raise NotImplementedError('cumprod is being written')


def cumsum(*args, **kwargs):
    raise NotImplementedError('cumsum is being written')


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


