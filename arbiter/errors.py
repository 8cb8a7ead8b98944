"""Errors a user can cause. Expected outcomes (escalations, unreadable PDFs) are results, not exceptions.

ArbiterError
 ├── ConfigError     bad profile, option or path: one line at the CLI, exit 2
 └── InputError      an input the user named cannot be used at all (missing file, no PDFs found)
"""


class ArbiterError(Exception):
    """Base of the errors Arbiter raises on purpose."""


class ConfigError(ArbiterError):
    """A profile, option or configured path is wrong."""


class InputError(ArbiterError):
    """An input named by the user cannot be used."""
