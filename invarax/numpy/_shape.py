"""PLACEHOLDER: being written now; replace this whole file."""


def argsort(*args, **kwargs):
    raise NotImplementedError('argsort is being written')


def broadcast_arrays(*args, **kwargs):
    raise NotImplementedError('broadcast_arrays is being written')


def broadcast_shapes(*args, **kwargs):
    raise NotImplementedError('broadcast_shapes is being written')


def broadcast_to(*args, **kwargs):
    raise NotImplementedError('broadcast_to is being written')


def concatenate(*args, **kwargs):
    raise NotImplementedError('concatenate is being written')


def expand_dims(*args, **kwargs):
    raise NotImplementedError('expand_dims is being written')


def flip(*args, **kwargs):
    raise NotImplementedError('flip is being written')


def hstack(*args, **kwargs):
    raise NotImplementedError('hstack is being written')


def moveaxis(*args, **kwargs):
    raise NotImplementedError('moveaxis is being written')


def pad(*args, **kwargs):
    raise NotImplementedError('pad is being written')


def ravel(*args, **kwargs):
    raise NotImplementedError('ravel is being written')


def repeat(*args, **kwargs):
    raise NotImplementedError('repeat is being written')


def reshape(*args, **kwargs):
    raise NotImplementedError('reshape is being written')


def roll(*args, **kwargs):
    raise NotImplementedError('roll is being written')


def sort(*args, **kwargs):
    raise NotImplementedError('sort is being written')


def split(*args, **kwargs):
    raise NotImplementedError('split is being written')


def squeeze(*args, **kwargs):
    raise NotImplementedError('squeeze is being written')


def stack(*args, **kwargs):
    raise NotImplementedError('stack is being written')


def swapaxes(*args, **kwargs):
    raise NotImplementedError('swapaxes is being written')


def take(*args, **kwargs):
    raise NotImplementedError('take is being written')


def take_along_axis(*args, **kwargs):
    raise NotImplementedError('take_along_axis is being written')


def tile(*args, **kwargs):
    raise NotImplementedError('tile is being written')


def transpose(*args, **kwargs):
    raise NotImplementedError('transpose is being written')


def vstack(*args, **kwargs):
    raise NotImplementedError('vstack is being written')


