"""The ``cutplane`` command."""
