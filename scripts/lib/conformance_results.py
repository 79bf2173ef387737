#!/usr/bin/env python3
"""Reads the checks.json files the conformance scripts leave under target/conformance/.

    conformance_results.py verdict SCENARIO_DIR SCENARIO [BASELINE.yml]
        Judges one scenario run the way `conformance --expected-failures` does: per check id the
        worst status counts (FAILURE > WARNING > SUCCESS > SKIPPED; INFO ignored); a FAILURE or
        WARNING not in the baseline is unexpected, a baseline entry whose check now passes is
        stale; a SKIPPED or absent baseline entry is tolerated. A run with no checks.json or no
        passing check at all also fails (a vacuous run proves nothing). Prints one line per
        problem and a summary; exits 1 on any problem.

    conformance_results.py table RESULTS_ROOT [BASELINE.yml]
        Prints the CONTRIBUTING.md "Conformance" table (markdown) from every RESULTS_ROOT/<suite>/suite.json
        and the checks.json of its scenarios: scenario -> checks passed/total per revision, with
        passed/total counted as the suite counts them (SUCCESS over SUCCESS+FAILURE+WARNING).

The baseline is the YAML the suite reads (`server:` then `- scenario:check-id` lines); only the
per-check form is used in this project, so a line parser suffices (no YAML dependency).
"""

import glob
import json
import os
import re
import sys

RANK = {"FAILURE": 3, "WARNING": 2, "SUCCESS": 1, "SKIPPED": 0}
BAD = ("FAILURE", "WARNING")


def read_baseline(path):
    """The set of (scenario, check-id) pairs under `server:` in the baseline file."""
    entries = set()
    if not path:
        return entries
    section = None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.split("#", 1)[0].rstrip()
            if not line.strip():
                continue
            top = re.match(r"^([A-Za-z_]+):\s*(\[\])?$", line)
            if top:
                section = top.group(1)
                continue
            item = re.match(r"^\s*-\s*['\"]?([^'\"\s]+)['\"]?\s*$", line)
            if not item:
                sys.exit(f"{path}: cannot read line: {raw.rstrip()}")
            if section != "server":
                continue
            scenario, sep, check = item.group(1).partition(":")
            if not sep or not check:
                sys.exit(f"{path}: entry {item.group(1)!r} is not scenario:check-id")
            entries.add((scenario, check))
    return entries


def load_checks(scenario_dir, scenario):
    """The checks of the single run under scenario_dir (the suite's -o layout), or None."""
    files = sorted(glob.glob(os.path.join(scenario_dir, f"server-{scenario}-*", "checks.json")))
    if not files:
        return None
    with open(files[-1], encoding="utf-8") as f:
        return json.load(f)


def worst_by_id(checks):
    worst = {}
    for c in checks:
        status = c.get("status")
        if status == "INFO" or status not in RANK:
            continue
        prev = worst.get(c["id"])
        if prev is None or RANK[status] >= RANK[prev["status"]]:
            worst[c["id"]] = c
    return worst


def counts(checks):
    by = {}
    for c in checks:
        by[c.get("status")] = by.get(c.get("status"), 0) + 1
    passed = by.get("SUCCESS", 0)
    total = passed + by.get("FAILURE", 0) + by.get("WARNING", 0)
    return passed, total, by.get("SKIPPED", 0)


def verdict(scenario_dir, scenario, baseline_path=None):
    baseline = {c for (s, c) in read_baseline(baseline_path) if s == scenario}
    checks = load_checks(scenario_dir, scenario)
    problems = []
    if checks is None:
        problems.append(f"no checks.json under {scenario_dir}: the suite did not run the scenario")
        checks = []
    worst = worst_by_id(checks)
    expected = []
    for cid, c in worst.items():
        if c["status"] in BAD:
            if cid in baseline:
                expected.append(cid)
            else:
                msg = c.get("errorMessage") or c.get("description") or ""
                problems.append(f"unexpected {c['status']} {scenario}:{cid}: {msg}")
    for cid in sorted(baseline):
        c = worst.get(cid)
        if c is not None and c["status"] == "SUCCESS":
            problems.append(f"stale baseline entry {scenario}:{cid}: it passes now; "
                            "remove it from the baseline")
    passed, total, skipped = counts(checks)
    if checks and passed == 0:
        problems.append(f"{scenario}: no check passed (vacuous run)")
    for p in problems:
        print(f"FAIL {p}")
    note = f", {len(expected)} expected failures (baseline)" if expected else ""
    note += f", {skipped} skipped" if skipped else ""
    state = "FAIL" if problems else "PASS"
    print(f"{state} {scenario}: {passed}/{total} checks passed{note}")
    return 1 if problems else 0


def table(root, baseline_path=None):
    baseline = read_baseline(baseline_path)
    suites = []
    for meta_path in sorted(glob.glob(os.path.join(root, "*", "suite.json"))):
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
        meta["dir"] = os.path.dirname(meta_path)
        suites.append(meta)
    if not suites:
        sys.exit(f"no results under {root}: run scripts/test-mcp-conformance.sh and "
                 "scripts/test-mcp-modern-conformance.sh first")
    suites.sort(key=lambda m: m["spec"])
    rows = []
    for meta in suites:
        for s in meta["scenarios"]:
            if s not in rows:
                rows.append(s)
    header = "| scenario | " + " | ".join(
        f"{m['spec']} (conformance {m['version']})" for m in suites) + " |"
    lines = [header, "|---|" + "---|" * len(suites)]
    for s in rows:
        cells = []
        for meta in suites:
            if s not in meta["scenarios"]:
                cells.append("—")
                continue
            checks = load_checks(os.path.join(meta["dir"], s), s)
            if checks is None:
                sys.exit(f"no results for {meta['spec']} {s}: run its conformance script first")
            passed, total, skipped = counts(checks)
            worst = worst_by_id(checks)
            expected = sum(1 for cid, c in worst.items()
                           if c["status"] in BAD and (s, cid) in baseline)
            notes = []
            if expected:
                notes.append(f"{expected} expected failures")
            if skipped:
                notes.append(f"{skipped} skipped")
            cells.append(f"{passed}/{total}" + (f" ({', '.join(notes)})" if notes else ""))
        lines.append(f"| `{s}` | " + " | ".join(cells) + " |")
    print("\n".join(lines))
    return 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "verdict":
        return verdict(argv[1], argv[2], argv[3] if len(argv) > 3 else None)
    if len(argv) >= 2 and argv[0] == "table":
        return table(argv[1], argv[2] if len(argv) > 2 else None)
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
