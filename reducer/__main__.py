"""`python -m reducer` runs the `reduce` command."""

from reducer.cli import main

main()
