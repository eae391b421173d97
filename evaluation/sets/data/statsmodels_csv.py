"""Put the statsmodels data files a question set uses into a folder: they are read from the statsmodels wheel on
PyPI (downloaded once into the folder), checked against the set's MANIFEST.tsv (file, path in the package,
sha256), and never committed to the project (some are shipped by statsmodels with their authors' permission only).

    .venv/bin/python evaluation/sets/data/statsmodels_csv.py evaluation/sets/data/tables_fresh3/MANIFEST.tsv DIR
"""

from __future__ import annotations

import csv
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

WHEEL = "statsmodels==0.14.4"


def main(manifest: Path, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    wheels = sorted(out.glob("statsmodels-*.whl"))
    if not wheels:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-d", str(out),
                        WHEEL], check=True)
        wheels = sorted(out.glob("statsmodels-*.whl"))
    with zipfile.ZipFile(wheels[-1]) as wheel, manifest.open(newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            data = wheel.read(row["source_path"])
            if hashlib.sha256(data).hexdigest() != row["sha256"]:
                print(f"{row['file']}: sha256 differs from {manifest.name}", file=sys.stderr)
                return 1
            (out / row["file"]).write_bytes(data)
            print(f"{out / row['file']}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
