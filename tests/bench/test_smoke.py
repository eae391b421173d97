"""Every script in bench/ runs at its `--smoke` size and prints its figures as a JSON line, so a change that
breaks a bench fails the suite. Only that it ran is checked: the figures are the bench's to report, and no
duration is asserted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HELPERS = {"common.py"}  # imported by the benches, not run
BENCHES = sorted(p.name for p in (REPO / "bench").glob("*.py") if p.name not in HELPERS)


def test_every_bench_is_listed():
    assert len(BENCHES) >= 15


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCHES)
def test_the_bench_runs_at_its_smoke_size(name):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "ANONYMIZED_TELEMETRY": "False"}
    done = subprocess.run([sys.executable, str(REPO / "bench" / name), "--smoke"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{name} --smoke exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines, f"{name} --smoke printed nothing"
    figures = json.loads(lines[-1])
    assert isinstance(figures, dict) and figures.get("bench") == name.removesuffix(".py")
    assert figures.get("size") == "smoke"
    if "skipped" in figures:
        pytest.skip(f"{name}: {figures['skipped']}")
    assert len(figures) > 2, f"{name} --smoke reported no figures: {figures}"
