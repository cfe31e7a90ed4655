#!/usr/bin/env python3
"""fuzz and replay --sarif/--junit: the SARIF validates against the shipped SARIF 2.1.0 schema
(tests/data/sarif-2.1.0-subset.schema.json), the JUnit XML parses, and both list exactly the
findings the run wrote. Exit 77 (CTest: skipped, with the reason) without python3-jsonschema.

usage: ci_reports_test.py FLATCHECK_BIN SCHEMA
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

try:
    import jsonschema
except ImportError:
    print("SKIPPED: python3-jsonschema is not installed (scripts/install-deps.sh installs it)")
    sys.exit(77)

BIN, SCHEMA = sys.argv[1], sys.argv[2]
SIGNATURE = re.compile(r"^[a-z-]+:[a-z]+:[^:]+(:.+)?$")
schema = json.load(open(SCHEMA))
validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, cwd):
    r = subprocess.run([BIN, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout + r.stderr


def sarif_results(path):
    log = json.load(open(path))
    errors = sorted(validator.iter_errors(log), key=str)
    check(not errors, f"{path} is not valid SARIF 2.1.0: {errors[:1]}")
    results = log["runs"][0]["results"]
    rules = [r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]]
    for r in results:
        check(SIGNATURE.match(r["ruleId"]), f"rule id {r['ruleId']} is a signature")
        check(rules[r["ruleIndex"]] == r["ruleId"], "ruleIndex points at the result's rule")
    return results


def junit_cases(path):
    root = ET.parse(path).getroot()
    check(root.tag == "testsuites", "JUnit root is <testsuites>")
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    check(int(suite.get("tests")) == len(cases), "JUnit tests= counts the test cases")
    failed = [c for c in cases if c.find("failure") is not None]
    check(int(suite.get("failures")) == len(failed), "JUnit failures= counts the failures")
    return cases, failed


with tempfile.TemporaryDirectory() as tmp:
    # The schema rejects what it should: the validator is not a no-op.
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
                                         "results": [{"level": "fatal", "message": {"text": "m"}}]}]}
    check(any(validator.iter_errors(bad)), "the schema rejects level 'fatal'")

    # A campaign with a fault: one result and one failed test case per finding written.
    code, out = run("fuzz", "--inject", "inline-by-name", "--cases", "300", "--quiet",
                    "--out", "found", "--sarif", "f.sarif", "--junit", "f.xml", cwd=tmp)
    check(code == 1, f"fuzz with a fault exits 1 (got {code}): {out[-400:]}")
    written = sorted(os.path.join("found", f) for f in os.listdir(os.path.join(tmp, "found"))
                     if f.endswith(".json"))
    check(len(written) >= 1, "the campaign wrote findings")
    results = sarif_results(os.path.join(tmp, "f.sarif"))
    uris = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results)
    check(uris == written, f"one SARIF result per repro file: {uris} vs {written}")
    cases, failed = junit_cases(os.path.join(tmp, "f.xml"))
    check(len(failed) == len(written), "one failed JUnit case per finding")
    check({c.find("failure").get("type") for c in failed} == {r["ruleId"] for r in results},
          "JUnit failure types are the SARIF rule ids")

    # Replaying the findings: one JUnit case per file, all failing with the fault on.
    code, out = run("replay", "found", "--inject", "inline-by-name", "--no-isolate",
                    "--sarif", "r.sarif", "--junit", "r.xml", cwd=tmp)
    check(code == 1, f"replay of failing cases exits 1 (got {code})")
    check(len(sarif_results(os.path.join(tmp, "r.sarif"))) == len(written), "replay: one result per file")
    cases, failed = junit_cases(os.path.join(tmp, "r.xml"))
    check(sorted(c.get("name") for c in cases) == written, "replay: one JUnit case per file")
    check(len(failed) == len(written), "replay: every case failed")

    # A clean campaign: no results, one passing test case.
    code, out = run("fuzz", "--cases", "20", "--quiet", "--out", "", "--sarif", "c.sarif",
                    "--junit", "c.xml", cwd=tmp)
    check(code == 0, f"a clean campaign exits 0 (got {code})")
    check(sarif_results(os.path.join(tmp, "c.sarif")) == [], "a clean campaign has no results")
    cases, failed = junit_cases(os.path.join(tmp, "c.xml"))
    check(len(cases) == 1 and not failed, "a clean campaign is one passing test case")

print("FAILED" if failures else "ok: SARIF valid, JUnit consistent")
sys.exit(1 if failures else 0)
