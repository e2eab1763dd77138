"""PLACEHOLDER: being written now; replace this whole file."""


def norm(*args, **kwargs):
    raise NotImplementedError('norm is being written')


