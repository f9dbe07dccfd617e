#!/usr/bin/env python3
"""Proves that the build enforces the SDK's layers (docs/architecture.md).

For every pair of layers (L, U) it preprocesses a one-line file that includes
a header of U, with exactly the include tree L's sources compile against
(sdk/CMakeLists.txt).  The include must resolve when U is L itself or below
it, and must fail when U is above L or beside it; the same for the public
headers (include/uncore/*.h) that each layer implements.  A failure prints
the pairs that disagree.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile


def probe_headers(source_dir, folder):
    """One header per folder below `folder`, so every sub-folder is probed."""
    found = []
    for root, _, files in sorted(os.walk(os.path.join(source_dir, folder))):
        headers = sorted(f for f in files if f.endswith(".h"))
        if headers:
            found.append(os.path.relpath(os.path.join(root, headers[0]),
                                         source_dir))
    return found


def resolves(compiler, tree, include, workdir):
    proc = subprocess.run(
        [compiler, "-std=c++20", "-E", "-x", "c++", "-I", tree, "-",
         "-o", os.devnull],
        input=f'#include "{include}"\n', text=True, cwd=workdir,
        capture_output=True)
    return proc.returncode == 0, proc.stderr


def check_compile_commands(path, layers, source_dir):
    """Each sdk/ source is compiled with its own layer's tree and no include
    directory inside the source tree (which would make every layer visible)."""
    with open(path) as f:
        commands = json.load(f)
    owner = {}
    for name, layer in layers.items():
        for folder in layer["own"]:
            owner[folder] = name
    wrong, checked = [], 0
    for entry in commands:
        rel = os.path.relpath(os.path.realpath(entry["file"]), source_dir)
        folder = next((f for f in owner if rel.startswith(f + "/")), None)
        if folder is None:
            continue
        checked += 1
        layer = layers[owner[folder]]
        words = entry.get("arguments") or entry["command"].split()
        dirs = []
        for i, w in enumerate(words):
            if w in ("-I", "-isystem", "-iquote") and i + 1 < len(words):
                dirs.append(words[i + 1])
            elif w.startswith(("-I", "-isystem")) and len(w) > 2:
                dirs.append(w[2:] if w.startswith("-I") else w[8:])
        dirs = [os.path.normpath(os.path.join(entry["directory"], d))
                for d in dirs]
        if layer["tree"] not in dirs:
            wrong.append(f"  {rel}: not compiled against {layer['tree']}")
        trees = {l["tree"]: n for n, l in layers.items()}
        higher = [d for d in dirs if d in trees and not set(
            layers[trees[d]]["folders"]) <= set(layer["folders"])]
        if higher:
            wrong.append(f"  {rel}: compiled against a higher layer's tree "
                         f"{higher}")
        inside = [d for d in dirs if d not in trees and (
            os.path.realpath(d) == source_dir or
            os.path.realpath(d).startswith(source_dir + "/"))]
        if inside:
            wrong.append(f"  {rel}: include directory inside the source "
                         f"tree {inside}: every layer would be visible")
    if checked == 0:
        wrong.append("  no sdk/ source found in the compile commands")
    print(f"{checked} sdk/ sources compile against their own layer's tree")
    return wrong


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", required=True, help="build/layers/layers.json")
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--compiler", required=True)
    parser.add_argument("--compile-commands",
                        help="compile_commands.json: checks that each sdk/ "
                        "source compiles against its layer's tree only")
    args = parser.parse_args()
    with open(args.layers) as f:
        layers = json.load(f)

    # What each layer owns: its folders' headers and its public headers.
    owned = {}
    for name, layer in layers.items():
        headers = [h for folder in layer["own"]
                   for h in probe_headers(args.source_dir, folder)]
        owned[name] = headers + ["uncore/" + h
                                 for h in layer["own_public_headers"]]
        if not owned[name]:
            sys.exit(f"layer {name} has no header to probe")

    cases = []
    for name, layer in layers.items():
        visible_folders = set(layer["folders"])
        visible_public = {"uncore/" + h for h in layer["public_headers"]}
        for other in layers:
            for header in owned[other]:
                if header.startswith("uncore/"):
                    allowed = header in visible_public
                else:
                    allowed = any(header.startswith(f + "/")
                                  for f in visible_folders)
                cases.append((name, other, header, allowed))

    wrong = []
    with tempfile.TemporaryDirectory() as workdir, \
            concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        results = pool.map(
            lambda c: resolves(args.compiler, layers[c[0]]["tree"], c[2],
                               workdir), cases)
        for (name, other, header, allowed), (ok, err) in zip(cases, results):
            if ok != allowed:
                first_error = err.strip().splitlines()[:1]
                wrong.append(f"  {name} including {header} ({other}): "
                             f"{'resolved' if ok else 'failed'}, expected "
                             f"{'to resolve' if allowed else 'to fail'} "
                             f"{first_error}")
    if args.compile_commands:
        wrong += check_compile_commands(args.compile_commands, layers,
                                        os.path.realpath(args.source_dir))
    upward = sum(1 for c in cases if not c[3])
    print(f"{len(layers)} layers, {len(cases)} includes probed: "
          f"{len(cases) - upward} allowed, {upward} forbidden")
    if wrong:
        print("the include trees do not match the layer order:")
        print("\n".join(wrong))
        return 1
    print("every forbidden include fails to resolve; every allowed one "
          "resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
