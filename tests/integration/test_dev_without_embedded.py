"""`taskyard dev` where the package was installed without its ``embedded`` extra (the base
install of an image, or pip install taskyard): no pgserver, so no embedded PostgreSQL. It
must say which extra to install, or to give a database, and start nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# pgserver made unimportable, as where it was never installed (None in sys.modules makes
# any `import pgserver` raise ImportError), then the installed command's entry point.
WITHOUT_PGSERVER = """
import sys
sys.modules["pgserver"] = None
sys.argv[0] = "taskyard"
from taskyard.cli.main import main
main()
"""


def test_dev_without_pgserver_names_the_extra(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TASKYARD_", "OTEL_"))}
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_PGSERVER, "dev", "--data-dir", str(tmp_path / "data"), "--no-jaeger"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "pgserver package is not installed" in out, out
    assert "pip install -e '.[embedded]'" in out and "pip install 'taskyard[embedded]'" in out, out
    assert "--database-url" in out, out
    # Nothing was started: no PostgreSQL data directory was made.
    assert not (tmp_path / "data" / "pgdata").exists()
    assert "Traceback" not in out, out
