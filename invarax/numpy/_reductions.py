"""PLACEHOLDER: being written now; replace this whole file."""


def all(*args, **kwargs):
    raise NotImplementedError('all is being written')


def amax(*args, **kwargs):
    raise NotImplementedError('amax is being written')


def amin(*args, **kwargs):
    raise NotImplementedError('amin is being written')


def any(*args, **kwargs):
    raise NotImplementedError('any is being written')


def argmax(*args, **kwargs):
    raise NotImplementedError('argmax is being written')


def argmin(*args, **kwargs):
    raise NotImplementedError('argmin is being written')


def cumprod(*args, **kwargs):
    raise NotImplementedError('cumprod is being written')


def cumsum(*args, **kwargs):
    raise NotImplementedError('cumsum is being written')


def max(*args, **kwargs):
    raise NotImplementedError('max is being written')


def mean(*args, **kwargs):
    raise NotImplementedError('mean is being written')


def min(*args, **kwargs):
    raise NotImplementedError('min is being written')


def prod(*args, **kwargs):
    raise NotImplementedError('prod is being written')


def std(*args, **kwargs):
    raise NotImplementedError('std is being written')


def sum(*args, **kwargs):
    raise NotImplementedError('sum is being written')


def var(*args, **kwargs):
    raise NotImplementedError('var is being written')


