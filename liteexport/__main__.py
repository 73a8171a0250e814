"""``python -m liteexport``: the CLI."""

from liteexport.cli import main

main()
