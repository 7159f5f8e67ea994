"""The Domino collector's metrics: every numeric statistic of ``show stat`` by name, the text ones operators read,
the few statistics the guide watches as gauges of their own, and the ``show_stat`` source.  Declarations only
(``collector.py`` adds the samples)."""

from __future__ import annotations

from ...core.metrics import NAMESPACE, MetricSpec
from ...core.sources import SourceMetrics

P = f"{NAMESPACE}_domino"

# At most this many statistics are exposed per run (a runaway output or a too-wide include cannot flood Prometheus).
MAX_STATISTICS = 5000

SOURCE_METRICS = SourceMetrics.declare(
    P, "1 if the source is configured and its command exists here, 0 if it is skipped.")
STATISTIC = MetricSpec(
    "middleware_domino_statistic", "gauge", "A numeric Domino statistic from `show stat`, as printed (thousands "
    "separators removed, no unit conversion: the unit is the one the statistic's name implies).", ("name",),
    "name is the statistic (Server.Users, Mem.Allocated, ...); filtered by include/exclude")
STATISTIC_INFO = MetricSpec(
    "middleware_domino_statistic_info", "info", "A text Domino statistic (only Server.Version.*, Server.Name, "
    "Server.Time.Start, and numbers whose digit grouping could not be decided, see "
    "middleware_domino_undecided_numbers); the text is the value label.", ("name",))
UNDECIDED_NUMBERS = MetricSpec(
    "middleware_domino_undecided_numbers", "gauge", "Statistics printed as numbers that were kept as text "
    "(statistic_info) because their separators could not be decided (2.978: 2978 or 2.978?) or do not fit the "
    "configured locale/thousands_separator/decimal_separator (those passing include/exclude or feeding a gauge of "
    "their own); 0 when every number was read.", (),
    "> 0: set collectors.domino.locale (or the separators); the source error names examples")
USERS = MetricSpec("middleware_domino_users", "gauge", "Users with sessions open on the server (Server.Users).")
MAIL_WAITING = MetricSpec(
    "middleware_domino_mail_waiting", "gauge", "Mail messages waiting to be routed (Mail.Waiting).")
MAIL_DEAD = MetricSpec(
    "middleware_domino_mail_dead", "gauge", "Undeliverable (dead) mail messages held in MAIL.BOX (Mail.Dead).")
TRANSACTIONS_PER_MINUTE = MetricSpec(
    "middleware_domino_transactions_per_minute", "gauge", "Transactions in the last minute "
    "(Server.Trans.PerMinute; the article's NotesMark throughput).")
STATISTICS = MetricSpec(
    "middleware_domino_statistics", "gauge", "Statistics exposed in the last run (statistic plus statistic_info "
    f"series), at most {MAX_STATISTICS}.")

# The statistics with a gauge of their own (matched case-insensitively: Domino prints MAIL.Dead and Mail.Dead).
CONVENIENCE = ((USERS, "Server.Users"), (MAIL_WAITING, "Mail.Waiting"), (MAIL_DEAD, "Mail.Dead"),
               (TRANSACTIONS_PER_MINUTE, "Server.Trans.PerMinute"))

SPECS = [*SOURCE_METRICS.specs(), STATISTIC, STATISTIC_INFO, USERS, MAIL_WAITING, MAIL_DEAD,
         TRANSACTIONS_PER_MINUTE, STATISTICS, UNDECIDED_NUMBERS]
