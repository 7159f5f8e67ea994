"""The one strict number reader (exporter/machine/numbers.py) the parsers share: ASCII digits only, a sign only
where the format has one, a decimal point with digits on both sides unless the format prints bare points,
bounded, never NaN, infinity, an exponent or ``_``."""

from __future__ import annotations

import pytest

from exporter.machine.numbers import MAX_DIGITS, decimal, integer


@pytest.mark.parametrize("token", ["", "-", "+", " 1", "1 ", "1_0", "٣", "１", "0x1", "1e3", "1.0", "--1", "-+1"])
def test_integer_refuses_what_no_program_prints_as_an_integer(token):
    assert integer(token, "+-") is None


def test_integer_signs_and_bound():
    assert integer("-1") == -1 and integer("+1") is None and integer("+1", "+-") == 1
    assert integer("-1", "") is None and integer("007", "") == 7
    assert integer("9" * MAX_DIGITS) == 10**MAX_DIGITS - 1 and integer("9" * (MAX_DIGITS + 1)) is None
    assert integer("9" * 5000) is None and integer("123", max_digits=2) is None


@pytest.mark.parametrize("token", ["", ".", "-", "-.", "nan", "inf", "-inf", "1e5", "1E+3", "1_0.5", "1.2.3", " 1",
                                   "٣.5", "0x1", "1,5", "--1"])
def test_decimal_refuses_what_is_no_plain_decimal(token):
    assert decimal(token, "+-", bare_point=True) is None


def test_decimal_points_signs_and_bound():
    assert decimal("1.64") == 1.64 and decimal("-3") == -3.0 and decimal("+3") is None
    assert decimal("+3", "+-") == 3.0
    assert decimal(".5") is None and decimal("5.") is None
    assert decimal(".5", bare_point=True) == 0.5 and decimal("5.", bare_point=True) == 5.0
    assert decimal("9" * 32) == float("9" * 32) and decimal("9" * 33) is None
