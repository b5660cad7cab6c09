"""`lossync` on the command line (also `python -m lossync`). Loading the libraries takes a
moment; a Ctrl-C during it exits quietly with 130, as a Ctrl-C during a run does, instead of
printing a traceback from inside pandas."""

import sys


def main() -> None:
    try:
        from .cli import main as cli
    except KeyboardInterrupt:
        sys.exit(130)
    cli()


if __name__ == "__main__":
    main()
