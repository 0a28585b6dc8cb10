"""Test services (Label Studio, ...) wait longer on a loaded machine and say why when they give up."""

import os


def test_the_deadline_scales_with_load_per_core(service_wait, monkeypatch):
    deadline, _ = service_wait
    monkeypatch.delenv("BIASKIT_SERVICE_TIMEOUT", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (14.0, 12.0, 10.0))
    assert deadline(240) == (240 * 6.0, "240 s x 6.0 for load average 14.0 on 2 cores")  # 14 / 2 = 7, capped at 6
    monkeypatch.setattr(os, "getloadavg", lambda: (5.0, 5.0, 5.0))
    assert deadline(240)[0] == 600.0  # 240 x 5 / 2
    monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert deadline(240)[0] == 240.0  # never below the quiet-machine time
    monkeypatch.setenv("BIASKIT_SERVICE_TIMEOUT", "900")
    assert deadline(240) == (900.0, "BIASKIT_SERVICE_TIMEOUT")


def test_the_timeout_message_names_the_overloaded_machine(service_wait, monkeypatch):
    _, message = service_wait
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (14.0, 12.0, 10.0))
    msg = message("Label Studio", 1440.2, "240 s x 6.0 for load average 14.0 on 2 cores")
    assert msg.startswith("Label Studio did not come up in 1440 s (deadline 240 s x 6.0 for load average 14.0 on 2 cores)")
    assert "the machine is overloaded (load average 14.0 on 2 cores)" in msg and "BIASKIT_SERVICE_TIMEOUT" in msg
    monkeypatch.setattr(os, "getloadavg", lambda: (0.3, 0.3, 0.3))
    assert "not overloaded, so see the server log" in message("Label Studio", 240, "240 s x 1.0")
