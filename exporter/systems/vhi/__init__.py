"""Verastream Host Integrator session server: host sessions, sessions per CPU, the memory formula."""
