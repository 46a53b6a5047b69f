#!/usr/bin/env python3
"""The library's public API (ID3MeterCore, ID3Meter) against the last release's.

The release is named in api/baseline ("VERSION COMMIT"); its API, as swift-api-digester dumps it,
is kept in api/VERSION/COMMIT/MODULE.json, so every clone compares, tags or not, shallow or not,
and nothing is built for it. The current API is dumped from the debug build's modules.

Both dumps are compared with `package` declarations taken out: the digester keeps them (marked
`isInternal`) and does not call public -> package a change, yet a backend can no longer use what
became `package`. A breaking change fails unless ID3MeterVersion.current has been raised past the
release and CHANGELOG.md's section for it lists the change under "### Breaking".

  scripts/api-check.py               the check (`make api-check`; `make test` runs it)
  scripts/api-check.py --regenerate  after a release named in api/baseline: its dumps, made by
                                     `swift package diagnose-api-breaking-changes` (`make api-baseline`)
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = ["ID3MeterCore", "ID3Meter"]
SWIFT = os.environ.get("SWIFT", "swift")


def toolchain_tool(name):
    swift = shutil.which(SWIFT) or SWIFT
    return os.path.join(os.path.dirname(os.path.realpath(swift)), name)


def public_only(node):
    """The dump without the declarations the digester marks internal (`package` ones)."""
    if "children" in node:
        node["children"] = [public_only(child) for child in node["children"] if not child.get("isInternal")]
    return node


def load(path):
    with open(path) as file:
        dump = json.load(file)
    dump["ABIRoot"] = public_only(dump["ABIRoot"])
    return dump


def current_dump(module, into):
    """The module as the debug build compiled it, with the module maps of the C targets it imports."""
    build = os.path.join(ROOT, ".build", "debug")
    flags = []
    maps = glob.glob(os.path.join(build, "*.build", "module.modulemap"))
    for include in glob.glob(os.path.join(ROOT, ".build", "checkouts", "**", "include"), recursive=True) + \
            glob.glob(os.path.join(ROOT, "Sources", "*", "include")):
        flags += ["-Xcc", "-I" + include]
        maps += glob.glob(os.path.join(include, "module.modulemap"))
    flags += [argument for path in maps for argument in ("-Xcc", "-fmodule-map-file=" + path)]
    path = os.path.join(into, module + ".json")
    result = subprocess.run([toolchain_tool("swift-api-digester"), "-dump-sdk", "-module", module,
                             "-I", os.path.join(build, "Modules"), "-o", path] + flags,
                            capture_output=True, text=True)
    if result.returncode != 0 or not os.path.exists(path):
        sys.exit(f"api-check: could not read {module}'s API from the debug build (swift build first):\n{result.stderr[-2000:]}")
    return path


def breakages(baseline, current, into):
    """The digester's findings, a line each, between two dumps of one module."""
    paths = []
    for name, dump in (("baseline", baseline), ("current", current)):
        path = os.path.join(into, name + ".json")
        with open(path, "w") as file:
            json.dump(dump, file)
        paths.append(path)
    result = subprocess.run([toolchain_tool("swift-api-digester"), "-diagnose-sdk",
                             "-input-paths", paths[0], "-input-paths", paths[1]], capture_output=True, text=True)
    lines = (result.stdout + result.stderr).splitlines()
    return [line for line in lines if line.strip() and not line.startswith("/*")]


def main():
    with open(os.path.join(ROOT, "api", "baseline")) as file:
        version, commit = file.read().split()
    digests = os.path.join(ROOT, "api", version, commit)
    if sys.argv[1:] == ["--regenerate"]:
        shutil.rmtree(os.path.join(ROOT, "api", version), ignore_errors=True)
        log = os.path.join(ROOT, ".build", "api-baseline.log")
        os.makedirs(os.path.dirname(log), exist_ok=True)
        with open(log, "w") as output:
            subprocess.run([SWIFT, "package", "diagnose-api-breaking-changes", commit, "--baseline-dir",
                            os.path.join(ROOT, "api", version), "--products"] + MODULES,
                           cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)
        missing = [m for m in MODULES if not os.path.exists(os.path.join(digests, m + ".json"))]
        if missing:
            sys.exit(f"api-check: no dump of {', '.join(missing)} at {commit}; the whole output: {log}")
        print(f"api-check: the API of {version} ({commit}) is in {os.path.relpath(digests, ROOT)}: commit it")
        return

    found = []
    with tempfile.TemporaryDirectory() as scratch:
        for module in MODULES:
            baseline = os.path.join(digests, module + ".json")
            if not os.path.exists(baseline):
                sys.exit(f"api-check: {os.path.relpath(baseline, ROOT)} is missing: make api-baseline")
            current = load(current_dump(module, scratch))
            found += [f"{module}: {line}" for line in breakages(load(baseline), current, scratch)]
    if not found:
        print(f"api-check: no breaking change to the library since {version}")
        return
    print("\n".join(found))
    with open(os.path.join(ROOT, "Sources", "ID3MeterCore", "Version.swift")) as file:
        current_version = re.search(r'static let current = "(.*)"', file.read()).group(1)
    if current_version == version:
        sys.exit(f"api-check: the library's API broke since {version} without a new version: raise "
                 "ID3MeterVersion.current and list the change in CHANGELOG.md under ### Breaking")
    with open(os.path.join(ROOT, "CHANGELOG.md")) as file:
        changelog = file.read()
    section = re.search(rf"^## {re.escape(current_version)}\b(.*?)(?=^## |\Z)", changelog, re.M | re.S)
    if not section or not re.search(r"^### Breaking", section.group(1), re.M):
        sys.exit(f"api-check: {current_version} breaks the API of {version}, and CHANGELOG.md's section "
                 f"for {current_version} has no ### Breaking list")
    print(f"api-check: {current_version} breaks the API of {version} as CHANGELOG.md says")


if __name__ == "__main__":
    main()
