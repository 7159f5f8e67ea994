"""Numbers read from text the exporter did not write (/proc, command output, REST and MQSC values): the one strict
reader, whose rules every parser shares.

- ASCII decimal digits only: ``str.isdigit`` and ``int()`` accept other scripts' digits (``int('٣')`` is 3), and
  ``int()``/``float()`` accept ``1_0``, blanks around the number, ``nan``, ``inf`` and exponents; none of that is
  a figure a program printed, so none of it is read.
- A sign only where the format has one (``signs``: ``"-"``, ``"+-"`` or ``""``).
- A decimal point only in :func:`decimal`, with digits on both sides unless the format prints ``.5`` or ``5.``
  (``bare_point``).
- Bounded: at most ``max_digits`` digits for an integer, ``max_length`` characters for a decimal, so that a
  value is always finite (a float of 400 digits is ``inf``) and never costs ``int()`` quadratic time.

Formats that group digits or mark decimals another way keep that explicit and read the digits here: Domino's
locale separators (systems/domino/locales.py), MQ's blank-is-absent values (systems/ibmmq/mqscmap.py), the
multipliers of Oracle's sizes (systems/oracle/parse.py).  This module sits with the OS readers because /proc's
reader (procfs.py) uses it too; core and the systems import it from here.
"""

from __future__ import annotations

MAX_DIGITS = 20  # 2**64 - 1 has 20 digits: the widest integer the kernel or a 64-bit counter writes
MAX_LENGTH = 32  # characters of one decimal figure in command output


def integer(token: str, signs: str = "-", max_digits: int = MAX_DIGITS) -> int | None:
    """A decimal integer (``12``, ``-1``; ``+1`` only with ``"+"`` in ``signs``) of at most ``max_digits``
    digits; None for anything else."""
    digits = token[1:] if token[:1] in signs else token  # "" is in any signs: an empty token stays empty
    if not digits or len(digits) > max_digits or not (digits.isascii() and digits.isdigit()):
        return None
    return int(token)


def decimal(token: str, signs: str = "-", bare_point: bool = False, max_length: int = MAX_LENGTH) -> float | None:
    """A plain decimal number (``12``, ``1.64``, ``-3``; ``.5`` and ``5.`` only with ``bare_point``) of at most
    ``max_length`` characters; None for anything else (``nan``, ``1e5``, ``1_0``, ``-``, non-ASCII digits)."""
    if not token or len(token) > max_length or not token.isascii():
        return None
    body = token[1:] if token[0] in signs else token
    whole, point, fraction = body.partition(".")
    if (whole and not whole.isdigit()) or (fraction and not fraction.isdigit()) or not (whole or fraction):
        return None
    if point and not (whole and fraction) and not bare_point:
        return None
    return float(token)
