"""The seed studies as one-line reproductions: `lossync reproduce NAME [--quick]`. The framework
is in framework.py; each seed's studies are one module that registers them."""

# The studies are listed in registration order: seeds 000, 001, 002, 003, 004, then BBR, then the AQMs (issue 35),
# then seed 001's future work (desynchronization, issue 33).
# isort: off
from . import synchronization, testbed, obs, ghstcp, xcp, bbr, aqm, desync  # noqa: F401
# isort: on

from .framework import STUDIES, Claim, Study, reproduce

__all__ = ["STUDIES", "Claim", "Study", "reproduce"]
