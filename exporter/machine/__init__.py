"""What the exporter asks of the operating system it runs on: reading /proc and /sys (``procfs``), psutil where
/proc is not Linux's (``psutil_procs``), the kernel's process events (``procevents``), running commands as
argument lists with deadlines and capped output (``runner``), through a remote-shell prefix (``remote``), calls
that may hang bounded by a deadline (``deadline``), reading their text line by line (``textlines``) and the one
strict reader of the numbers in it (``numbers``).  It knows
neither the collection framework nor the web server: ``exporter.core`` and the systems build on it."""
