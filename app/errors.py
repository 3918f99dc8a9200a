"""Errors the command line reports as one line with exit code 2."""


class UsageError(Exception):
    """A user's mistake: bad usage or a parameter outside its allowed range."""
