"""PLACEHOLDER: being written now; replace this whole file."""


def getitem(*args, **kwargs):
    raise NotImplementedError('getitem is being written')


def IndexUpdateHelper(*args, **kwargs):
    raise NotImplementedError('IndexUpdateHelper is being written')


