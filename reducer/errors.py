"""Errors the CLI turns into exit codes: bad input (2) and an original that does not fail as expected (3)."""


class InputError(Exception):
    """A user file or option is wrong; the message names the file, the field and what was expected."""


class NotFailingError(Exception):
    """The original case does not fail, or fails differently from `expect`."""
