"""``python -m evalkit``: the same entry point as the ``evalkit`` command (:mod:`evalkit._entry`)."""

from evalkit._entry import console

console()
