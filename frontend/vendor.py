"""Vendor the web UI's front-end libraries into the package (run by hand after changing versions).

`npm ci` installs the versions pinned in package.json/package-lock.json beside this script; the
dist files named under "vendor" are copied unchanged into src/memtrace/ui/static/vendor/ with each
package's licence file, and VENDORED.json records versions, licences and SHA-256 hashes. A package
whose licence is not on the permissive list stops the script before anything is copied.

    python frontend/vendor.py            # install, check, copy, record
    python frontend/vendor.py --check    # only verify the committed files against VENDORED.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE.parent / "src" / "memtrace" / "ui" / "static" / "vendor"
RECORD = TARGET / "VENDORED.json"
PERMISSIVE = {"MIT", "ISC", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "0BSD"}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def vendored_name(package: str) -> str:
    """A flat folder name for a package (`@dagrejs/dagre` -> `dagrejs-dagre`)."""
    return package.lstrip("@").replace("/", "-")


def plan(manifest: dict) -> list[dict]:
    """What to copy from each installed package, refusing any non-permissive licence."""
    entries = []
    for package, spec in manifest["vendor"].items():
        installed = HERE / "node_modules" / package
        meta = json.loads((installed / "package.json").read_text())
        licence = meta.get("license")
        if licence not in PERMISSIVE:
            sys.exit(f"{package}@{meta['version']}: licence {licence!r} is not permissive; not vendored")
        pinned = manifest["dependencies"].get(package)
        if pinned != meta["version"]:
            sys.exit(f"{package}: installed {meta['version']} but package.json pins {pinned}")
        entries.append(
            {
                "package": package,
                "version": meta["version"],
                "license": licence,
                "source": installed,
                "files": [*spec["files"], spec["licence"]],
                "note": spec.get("why", ""),
            }
        )
    return entries


def vendor() -> None:
    manifest = json.loads((HERE / "package.json").read_text())
    subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=HERE, check=True)
    entries = plan(manifest)
    if TARGET.exists():
        shutil.rmtree(TARGET)
    record = []
    for entry in entries:
        folder = TARGET / vendored_name(entry["package"])
        folder.mkdir(parents=True)
        files = {}
        for relative in entry["files"]:
            copied = folder / Path(relative).name
            shutil.copyfile(entry["source"] / relative, copied)
            files[copied.relative_to(TARGET).as_posix()] = sha256(copied)
        record.append({k: entry[k] for k in ("package", "version", "license", "note")} | {"files": files})
    RECORD.write_text(json.dumps(record, indent=2) + "\n")
    print(f"vendored {len(record)} packages into {TARGET}")


def check() -> int:
    """Every file VENDORED.json names is present with its recorded hash."""
    problems = []
    for entry in json.loads(RECORD.read_text()):
        for relative, digest in entry["files"].items():
            path = TARGET / relative
            if not path.exists():
                problems.append(f"{relative}: missing")
            elif sha256(path) != digest:
                problems.append(f"{relative}: hash differs from VENDORED.json")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify the committed vendored files")
    args = parser.parse_args()
    if args.check:
        sys.exit(check())
    vendor()


if __name__ == "__main__":
    main()
