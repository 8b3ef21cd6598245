"""`python -m benchsmith`: the same as the `benchsmith` command."""

from benchsmith.cli import main

if __name__ == "__main__":
    main()
