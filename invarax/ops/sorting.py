"""PLACEHOLDER: being written now; replace this whole file."""


def sort(*args, **kwargs):
    raise NotImplementedError('sort is being written')


