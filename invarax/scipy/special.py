"""PLACEHOLDER: being written now; replace this whole file."""


def logsumexp(*args, **kwargs):
    raise NotImplementedError('logsumexp is being written')


