"""``python -m citewise.cli``: the ``citewise`` command."""

from citewise.cli import main

main()
