"""The ssh prefix of a probed host (machine/sshcontrol.py): the host always after ``--``, refused options, and one
connection master per target and connection settings."""

from __future__ import annotations

import os
import stat

import pytest

from exporter.machine.sshcontrol import ControlDirectory, option_problem, split_target, ssh_prefix


def test_the_host_comes_after_double_dash_with_batch_mode_and_the_port_of_the_target():
    argv = ssh_prefix("aix07:2222", user="monitor", port=22, identity_file="/k", config_file="/cfg",
                      options=("StrictHostKeyChecking=yes",))
    assert argv[:3] == ["ssh", "-F", "/cfg"]
    assert "BatchMode=yes" in argv and argv[-2:] == ["--", "aix07"]
    assert argv[argv.index("-p") + 1] == "2222"  # the target's own port wins
    assert argv[argv.index("-l") + 1] == "monitor" and argv[argv.index("-i") + 1] == "/k"


@pytest.mark.parametrize("target, expected", [
    ("hpux01", ("hpux01", None)), ("hpux01:22", ("hpux01", 22)), ("[2001:db8::1]:2222", ("2001:db8::1", 2222)),
    ("[2001:db8::1]", ("2001:db8::1", None)), ("2001:db8::1", ("2001:db8::1", None)), ("10.0.0.1:22", ("10.0.0.1", 22)),
])
def test_targets_split_into_host_and_port(target, expected):
    assert split_target(target) == expected


@pytest.mark.parametrize("option", ["ProxyCommand=nc %h %p", "proxycommand=sh", "LocalCommand=id",
                                    "PermitLocalCommand=yes", "KnownHostsCommand=/bin/x", "Match=exec",
                                    "ControlPath=/tmp/x", "BatchMode=no", "StrictHostKeyChecking yes",
                                    "UserKnownHostsFile=/a\nProxyCommand=x", "PKCS11Provider=/lib/x.so"])
def test_options_that_run_commands_or_that_the_exporter_owns_are_refused(option):
    assert option_problem(option) is not None


def test_ordinary_connection_options_pass():
    for option in ("StrictHostKeyChecking=yes", "UserKnownHostsFile=/etc/mwx/known_hosts", "ProxyJump=bastion",
                   "ServerAliveInterval=15", "HostKeyAlgorithms=ssh-ed25519"):
        assert option_problem(option) is None


def test_each_target_gets_its_own_master_socket_in_a_private_directory(tmp_path):
    control = ControlDirectory(str(tmp_path))
    try:
        paths = {target: next(a for a in ssh_prefix(target, control=control, control_persist=60)
                              if a.startswith("ControlPath="))
                 for target in ("hpux01", "hpux02", "hpux01:2222")}
        assert len(set(paths.values())) == 3  # aliases of one address must not share a master
        assert paths["hpux01"] == next(a for a in ssh_prefix("hpux01", control=control, control_persist=60)
                                       if a.startswith("ControlPath="))
        mode = stat.S_IMODE(os.stat(control.path).st_mode)
        assert mode == 0o700
        assert all(len(p.split("=", 1)[1]) + 17 < 108 for p in paths.values())
        assert "ControlPersist=60" in ssh_prefix("hpux01", control=control, control_persist=60)
        assert not any(a.startswith("Control") for a in ssh_prefix("hpux01", control=control, control_persist=0))
    finally:
        path = control.path
        control.close()
    assert not os.path.exists(path)
