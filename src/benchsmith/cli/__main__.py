"""``python -m benchsmith.cli``."""

from benchsmith.cli import main

main()
