"""Invented clients for tests and bench/auth_flood.py: threads that send wrong basic-auth passwords (each a new
one) to an exporter's /metrics back to back over keep-alive connections, as a password-guessing flood does."""

from __future__ import annotations

import base64
import http.client
import threading


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def flood(port: int, guessers: int, stop: threading.Event, outcomes: dict[int, int],
          user: str = "prometheus") -> list[threading.Thread]:
    """Start ``guessers`` threads guessing ``user``'s password on 127.0.0.1:``port`` until ``stop`` is set; each
    answer's status (0: no answer) is counted in ``outcomes``. Returns the started threads (join them)."""
    lock = threading.Lock()

    def guess(thread: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        attempt = 0
        while not stop.is_set():
            attempt += 1
            try:
                conn.request("GET", "/metrics", headers={"Authorization": basic(user, f"{thread}/{attempt}")})
                response = conn.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                status = 0
            with lock:
                outcomes[status] = outcomes.get(status, 0) + 1
        conn.close()

    threads = [threading.Thread(target=guess, args=(i,), daemon=True) for i in range(guessers)]
    for thread in threads:
        thread.start()
    return threads
