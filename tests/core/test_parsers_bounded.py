"""The inputs that once made parsers backtrack for seconds or raise: each now gives the right answer (or none)
without raising, and a bad line next to good ones does not lose the good ones.  How long they take is measured in
bench/fuzz.py (no timing assertions here)."""

from __future__ import annotations

from exporter.systems.hpom.parse import MAX_LINE, parse_count, parse_opcsv_status, parse_ovc_status
from exporter.systems.ibmmq.parse import parse_mqsc, to_age, to_int
from exporter.systems.vhi.parse import parse_cpu_list

GOOD_OVC = "ovcd        OV Control                   CORE          (2998)    Running"
GOOD_OPCSV = "HPOM    Message Manager    opcmsgm    (2643) is running"


def test_ovc_runs_of_blanks_are_not_a_line_and_do_not_hide_the_others():
    bad = "ovcd" + " " * 1000 + "x"
    entries = parse_ovc_status("\n".join([bad, GOOD_OVC, bad]))
    assert [(e.name, e.pid, e.running) for e in entries] == [("ovcd", 2998, True)]


def test_ovc_a_long_gap_before_the_state_is_still_a_column_gap():
    entries = parse_ovc_status("ovcd  OV Control  CORE  (2998)" + " " * 300 + "Running")
    assert [(e.name, e.category, e.pid, e.running) for e in entries] == [("ovcd", "CORE", 2998, True)]


def test_opcsv_runs_of_blanks_and_overlong_lines():
    bad = "opcmsgm" + " " * 8000 + "x"
    long_prose = "x" * (MAX_LINE + 1) + " opcmsgm (12) is running"
    entries = parse_opcsv_status("\n".join([bad, long_prose, GOOD_OPCSV]))
    assert [(e.name, e.pid, e.running) for e in entries] == [("opcmsgm", 2643, True)]


def test_a_pid_of_thousands_of_digits_is_not_a_pid():
    entries = parse_ovc_status("ovcd  OV Control  CORE  (" + "1" * 200 + ")  Running\n" + GOOD_OVC)
    assert [e.pid for e in entries if e.pid is not None] == [2998]


def test_parse_count_beyond_any_queue_is_no_count():
    assert parse_count("9" * 5000) is None
    assert parse_count("queue msgmgrq: 1234 entries") == 1234
    assert parse_count("9" * 18) == int("9" * 18)


def test_mq_integers_beyond_64_bits_are_no_value():
    assert to_int("9" * 5000) is None
    assert to_int(10**400) is None
    assert to_age(10**400) is None
    assert to_int(str(2**63 - 1)) == 2**63 - 1
    assert to_int(str(2**63)) is None
    assert to_age("-1") is None and to_age("12") == 12.0


def test_runmqsc_long_sslpeer_line_keeps_the_object():
    text = ("AMQ8417I: Display Channel Status details.\n   CHANNEL(APP.SVRCONN)  CHLTYPE(SVRCONN)\n"
            + "   SSLPEER( ) LPEER( )" * 4000 + "\n   STATUS(RUNNING)\n")
    blocks, errors = parse_mqsc(text)
    assert errors == []
    assert blocks[0]["CHANNEL"] == "APP.SVRCONN" and blocks[0]["STATUS"] == "RUNNING"
    assert blocks[0]["SSLPEER"] == ""


def test_cpu_list_ranges_are_bounded_and_bad_parts_skipped():
    assert parse_cpu_list("0-10000000") == set()
    assert parse_cpu_list("0-3,x,6,9-8,8-9") == {0, 1, 2, 3, 6, 8, 9}
    assert parse_cpu_list("1" * 4300) == set()
    assert parse_cpu_list("8190-8191") == {8190, 8191}


def test_cpu_list_work_does_not_grow_with_repeated_ranges_or_parts(monkeypatch):
    """An 878 KB list of repeated ranges took seconds to minutes: each part added its whole range to the set again.
    Counted, not timed: the CPUs walked (the lengths of the ranges the parser makes) stay under MAX_CPU however
    often a range repeats, and the numbers converted stay under two per part read, at most MAX_PARTS parts."""
    from exporter.systems.vhi import parse as vhi

    walked, converted = [0], [0]

    def counting_range(*args):
        made = range(*args)
        walked[0] += len(made)
        return made

    def counting_int(*args):
        converted[0] += 1
        return int(*args)

    monkeypatch.setattr(vhi, "range", counting_range, raising=False)
    monkeypatch.setattr(vhi, "int", counting_int, raising=False)
    assert parse_cpu_list(",".join(["0-8191"] * 2000)) == set(range(8192))
    assert walked[0] <= vhi.MAX_CPU  # was 2,000 x 8,192
    walked[0] = converted[0] = 0
    assert parse_cpu_list(",".join(["1"] * 100_000)) == {1}
    assert converted[0] <= 2 * vhi.MAX_PARTS and walked[0] <= vhi.MAX_CPU  # was 100,000 parts, 5 int() each
    assert parse_cpu_list(",".join(["0"] * vhi.MAX_PARTS + ["5"])) == {0}  # the parts past MAX_PARTS are not read


def test_a_line_of_only_punctuation_is_no_status_line():
    """Found by bench/fuzz.py: a line "." left nothing to compare with the state words."""
    assert parse_opcsv_status(".\n" + GOOD_OPCSV) == parse_opcsv_status(GOOD_OPCSV)
    assert parse_ovc_status(";\n" + GOOD_OVC) == parse_ovc_status(GOOD_OVC)
