"""The advisor: the guides' recommendations judged against what the exporter observed, as a report and a page."""
