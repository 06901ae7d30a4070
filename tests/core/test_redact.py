"""What leaves the machine in a bundle: the user's and the host's names are hidden in paths and user@host,
never in the kernel's own code (a user called `data` keeps `def k(data, w)`)."""

from __future__ import annotations

import pytest

from reducer.bundle import write
from reducer.toolchain.launch import Toolchain

pytestmark = pytest.mark.timeout(30)


def test_names_are_hidden_in_paths_not_in_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(write.getpass, "getuser", lambda: "data")
    monkeypatch.setattr(write.socket, "gethostname", lambda: "gpu01")
    redact = write.Redactor(Toolchain("/opt/py/bin/python", None, None, "3.11.7", "/opt/ms/compiler.py"), {})
    kernel = "def k(data, w):\n    out = output_tensor(data.shape, data.dtype)\n"
    assert redact.text(kernel) == kernel
    log = "open /mnt/data/run/k.info failed on data@gpu01; see /srv/gpu01/logs\n"
    assert (
        redact.text(log)
        == "open /mnt/<redacted>/run/k.info failed on <redacted>@<redacted>; see /srv/<redacted>/logs\n"
    )
