"""The measured curves of the vendor documents, transcribed as data for the forecasts (exporter/advisor/forecasts.py).

Each table keeps the document's own rows exactly as printed (seconds, msg/s, percent), with the document title and
section/table it comes from as docs/sources.md lists them, so that a forecast can cite it and the tests can check
that the interpolation returns the document's values at its own points.  Derived curves (ratios, per-added-queue-
manager gains) are computed from these rows in forecasts.py, never typed in twice.
"""

from __future__ import annotations

from dataclasses import dataclass

HPOM = "HP Operations Manager for UNIX 8.21/8.30 Performance Guide"
VHI = "Verastream Host Integrator Server Performance (Technical Note 10087)"
MQSI = "MQSeries Integrator for Sun Solaris v1.1: Maximizing persistent message throughput"


@dataclass(frozen=True)
class Source:
    document: str
    section: str


# ---- HPOM ---------------------------------------------------------------------------------------------------------

# Test: Message Storm, Interpretation: 100,000 messages injected at 360 msg/s, drained at 272 msg/s on average
# (120-304), the queue empty after 412 s.
STORM = Source(HPOM, "Test: Message Storm, Interpretation")
STORM_RECOVERY_SECONDS = 412.0
STORM_MESSAGES = 100_000
STORM_INJECTION_RATE = 360.0
STORM_DRAIN_RATE_AVERAGE = 272.0
STORM_DRAIN_RATE_RANGE = (120.0, 304.0)

# Tables 12-13: message throughput (msg/s) with the duplicates counter off, on without message keys, on with one
# key for all messages.  8.21 on Itanium, 8.30 with the auto key hotfix.
TABLE_12 = Source(HPOM, "Test: Suppressing Message Duplicates, Table 12 (HPOM for UNIX 8.21 Message Throughput - "
                        "Duplicates Counter)")
TABLE_12_MSGS_PER_SECOND = {"off": 476.0, "no_keys": 28.0, "one_key": 294.0}
TABLE_13 = Source(HPOM, "Test: Suppressing Message Duplicates, Table 13 (HPOM for UNIX 8.30 Message Throughput - "
                        "Duplicates Counter)")
TABLE_13_MSGS_PER_SECOND = {"off": 226.4, "no_keys": 137.0, "one_key": 263.2}

# Table 15: MoM synchronisation time (s) after acknowledging N messages on the destination server's Java GUI.
TABLE_15 = Source(HPOM, "Test: MoM Message Forwarding, Table 15 (Acknowledging Messages - MoM) and Conclusions")
TABLE_15_SYNC_SECONDS = ((1000, 12.0), (2000, 21.37), (3000, 31.34), (4000, 38.54))

# Table 16 (8.21): start-up time (s) of two GUIs by active messages and responsible nodes; Java at 50,000 messages
# is "first / second" GUI.  Rows: (active messages, responsible nodes, Motif, Java first, Java second).
TABLE_16 = Source(HPOM, "Test: Varying the Number of Managed Nodes and Messages, Table 16 (GUI Startup Time - "
                        "Managed Nodes / Active Messages)")
TABLE_16_ROWS = ((5000, 500, 45.0, 6.0, 6.0), (5000, 2000, 154.0, 13.0, 13.0),
                 (50000, 500, 57.0, 68.0, 75.0), (50000, 2000, 167.0, 49.0, 89.0))

# Table 17 (8.30): logon and start-up time (s) of 1, 5, 10 and 20 Java GUIs started together, by active messages
# and managed nodes.  The table labels its row header "Managed Nodes", but the rows are the number of Java GUIs
# (the text: "a varying number of Java GUIs"; the columns carry the 500 / 2,000 nodes).
TABLE_17 = Source(HPOM, "Test: Varying the Number of Managed Nodes and Messages, Table 17 (GUI Startup Time - "
                        "Active Messages and Managed Nodes)")
TABLE_17_GUIS = (1, 5, 10, 20)
# (active messages, managed nodes) -> per GUI count: (logon, start-up)
TABLE_17_SECONDS = {
    (5000, 500): ((5.1, 6.609), (5.438, 6.906), (5.856, 7.39), (6.735, 8.61)),
    (5000, 2000): ((5.821, 7.413), (6.193, 7.771), (6.42, 8.004), (8.021, 9.201)),
    (50000, 500): ((12.201, 15.662), (13.481, 17.028), (17.869, 21.272), (30.653, 34.283)),
    (50000, 2000): ((36.975, 50.498), (39.638, 53.531), (46.025, 59.597), (64.237, 77.618)),
}

# Table 18 (8.21): start-up time (s) of two Java GUIs at 10,000 active messages by CMAs per message.
TABLE_18 = Source(HPOM, "Test: Varying the Number of CMAs, Table 18 (Java GUI Start-Up Time - CMAs in Active "
                        "Messages)")
TABLE_18_STARTUP_SECONDS = ((1, 14.5), (10, 38.0), (50, 58.0))

# Table 19 (8.30): message throughput (msg/s) by CMAs per message, no Java GUIs.
TABLE_19 = Source(HPOM, "Test: Varying the Number of CMAs, Table 19 (Message Throughput - Messages with CMAs)")
TABLE_19_MSGS_PER_SECOND = ((1, 212.8), (10, 192.3), (50, 112.4))

# Table 20 (8.30): logon and start-up time (s) of 1, 5, 10, 20 Java GUIs by CMAs per message (10,000 messages,
# operators responsible for 2,000 nodes).  CMAs -> per GUI count: (logon, start-up)
TABLE_20 = Source(HPOM, "Test: Varying the Number of CMAs, Table 20 (Java GUI Startup time - Messages with CMAs)")
TABLE_20_GUIS = (1, 5, 10, 20)
TABLE_20_SECONDS = {
    1: ((9.987, 13.481), (10.372, 13.882), (10.606, 14.212), (14.73, 19.618)),
    10: ((12.378, 20.266), (12.75, 21.134), (13.101, 22.09), (20.96, 29.058)),
    50: ((23.292, 51.038), (24.275, 54.258), (24.548, 57.659), (36.357, 73.137)),
}
TABLE_20_MESSAGES = 10_000
TABLE_20_NODES = 2000

# ---- VHI ----------------------------------------------------------------------------------------------------------

CONCURRENT_SESSIONS = Source(VHI, "Concurrent Sessions")
SESSIONS_PER_CPU_LIMIT = 250.0
PROCESSORS = Source(VHI, "Processors and Performance")
# Approximate gain in performance of doubling the CPUs, from the given count: 2 vs 1, 4 vs 2, 8 vs 4.
CPU_DOUBLING_GAIN = ((1, 0.75), (2, 0.38), (4, 0.14))
MAX_RECOMMENDED_CORES = 4
# Transactions per second of the 37-entity procedure by concurrent sessions (columns) and CPUs (rows).
TPS_SESSIONS = (1, 5, 10, 20, 35, 55, 80, 100)
TPS_BY_CPUS = {
    1: (0.53, 0.76, 0.80, 0.85, 0.84, 0.85, 0.83, 0.80),
    2: (0.58, 1.18, 1.33, 1.44, 1.47, 1.50, 1.50, 1.48),
    4: (0.58, 1.78, 1.88, 1.88, 2.06, 2.06, 2.34, 2.24),
    8: (0.71, 2.00, 2.13, 2.29, 2.26, 2.33, 2.34, 2.24),
}

# ---- MQSI ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MqRow:
    """One row of the report's hub statistics: one physical box."""

    rules_engines: int
    qmgrs: int
    avg_msgs_per_second: float
    total_msgs_per_second: float
    cpu_idle_percent: float
    io_wait_percent: float


def _rows(*rows: tuple) -> tuple[MqRow, ...]:
    return tuple(MqRow(*row) for row in rows)


# Test Case 2, Figure 4 (P hub, normal operation), box P1; Figure 5 (the whole hub failed over to P1).
TEST_CASE_2 = Source(MQSI, "Test Case 2, Figures 4-5")
TEST_CASE_2_NORMAL_P1 = _rows(
    (1, 1, 86, 86, 70, 20), (1, 2, 66, 132, 50, 23), (1, 3, 55, 165, 33, 21), (1, 4, 49, 196, 21, 16),
    (1, 5, 43, 215, 12, 10), (2, 1, 112, 112, 53, 23), (2, 2, 84, 168, 24, 18), (2, 3, 61, 183, 9, 8),
    (2, 4, 48, 192, 3, 2), (2, 5, 39, 195, 1, 0))
TEST_CASE_2_FAILOVER_P1 = _rows(
    (1, 2, 68, 136, 47, 19), (1, 4, 59, 236, 30, 16), (1, 6, 46, 276, 7, 5), (1, 8, 35, 280, 1, 0),
    (1, 10, 27, 270, 1, 0), (2, 2, 92, 184, 20, 13), (2, 4, 67, 268, 4, 3), (2, 6, 41, 246, 1, 0),
    (2, 8, 30, 240, 1, 0), (2, 10, 24, 240, 1, 0))
# Test Case 3, Figure 7 (M hub, shared disks), box M1.
TEST_CASE_3 = Source(MQSI, "Test Case 3, Figure 7")
TEST_CASE_3_NORMAL_M1 = _rows(
    (1, 1, 63, 63, 80, 66), (1, 2, 49, 98, 64, 61), (1, 3, 40, 120, 51, 49), (1, 4, 31, 124, 42, 40),
    (1, 5, 25, 125, 35, 34), (2, 1, 61, 61, 74, 63), (2, 2, 46, 92, 56, 54), (2, 3, 38, 114, 39, 38),
    (2, 4, 28, 112, 33, 32), (2, 5, 21, 105, 24, 22))
# Test Case 4, Figure 9 (M hub, one disk per queue manager and log), box M1.
TEST_CASE_4 = Source(MQSI, "Test Case 4, Figure 9")
TEST_CASE_4_NORMAL_M1 = _rows(
    (1, 1, 55, 55, 80, 61), (1, 2, 45, 90, 65, 58), (1, 3, 41, 123, 52, 48), (1, 4, 40, 160, 36, 35),
    (1, 5, 37, 185, 24, 23), (2, 1, 56, 56, 69, 56), (2, 2, 51, 102, 45, 43), (2, 3, 49, 147, 23, 22),
    (2, 4, 43, 172, 10, 9), (2, 5, 37, 185, 4, 3))
# Test Case 5, Figure 11 (P hub, one disk per queue manager and log), box P1.
TEST_CASE_5 = Source(MQSI, "Test Case 5, Figure 11")
TEST_CASE_5_NORMAL_P1 = _rows(
    (1, 1, 86, 86, 70, 18), (1, 2, 68, 136, 50, 21), (1, 3, 59, 177, 32, 18), (1, 4, 52, 208, 18, 13),
    (1, 5, 46, 230, 9, 6), (2, 1, 119, 119, 53, 21), (2, 2, 91, 182, 22, 15), (2, 3, 69, 207, 7, 5),
    (2, 4, 53, 212, 2, 1), (2, 5, 42, 210, 1, 0))

MQ_TEST_CASES = {"test_case_2": (TEST_CASE_2, TEST_CASE_2_NORMAL_P1),
                 "test_case_3": (TEST_CASE_3, TEST_CASE_3_NORMAL_M1),
                 "test_case_4": (TEST_CASE_4, TEST_CASE_4_NORMAL_M1),
                 "test_case_5": (TEST_CASE_5, TEST_CASE_5_NORMAL_P1)}
