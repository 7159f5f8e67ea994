"""HCL (formerly IBM/Lotus) Domino servers: the statistics of the server console's ``show stat``.

``settings.py`` holds the configuration (``collectors.domino``: the command, the statistics kept, the server's
number locale), ``metrics.py`` the series, ``collector.py`` runs the command as one source under
``core/sources.SourceSet``, ``parse.py`` reads its text, and ``locales.py`` holds the number conventions by locale
(apart, so that the settings check a locale without importing the parser).
"""

# the registry names the collector from these without importing its settings or code (docs/footprint.md)
NAME = "domino"
DESCRIPTION = "Domino server statistics from the console (show stat)."
