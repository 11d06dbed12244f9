#!/usr/bin/env python3
"""Checks that the folders inside each library module depend one way (docs/ARCHITECTURE.md).

A folder depends on another when one of its files names a type, protocol or type alias declared at
the top level of a file in the other. The layers below list each module's folders from the bottom
up; a file may name types of its own layer and the layers below it, never above. Prints each back
edge with the file and the names that make it, and exits 1 when there is one.

    scripts/layering.py            check
    scripts/layering.py --graph    print every folder edge (for the architecture page)
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Bottom first. Folders on the same line form one layer and may use each other (none do today:
# every folder is a layer of its own, so two folders never point at each other).
LAYERS = {
    "MTLSTrust": [
        ["OpenSSL"],
        ["Encoding"],
        ["Keys"],
        ["Certificate"],
        ["PKCS12"],
        ["Issuing"],
        ["Files"],
        ["Trust"],
        ["Pinning"],
        ["Evaluators"],
        ["Platform"],
    ],
    "MTLSHTTP": [
        ["Text"],
        ["HTTP1"],
        ["Cookies"],
        ["Transport"],
        ["Auth"],
        ["Forms"],
        ["Login"],
    ],
}

DECL = re.compile(
    r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|open|final|indirect)\s+)*"
    r"(?:struct|class|enum|protocol|actor|typealias)\s+([A-Z]\w*)",
    re.M,
)
IDENT = re.compile(r"\b[A-Z]\w*\b")


def strip(text):
    """Drops comments and string literals, which name types without using them."""
    text = re.sub(r'"""(?:.|\n)*?"""', '""', text)
    text = re.sub(r"/\*(?:.|\n)*?\*/", " ", text)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return text


def folder_of(module_dir, path):
    rel = os.path.relpath(path, module_dir)
    parts = rel.split(os.sep)
    return parts[0] if len(parts) > 1 else "."


def main():
    graph_only = "--graph" in sys.argv
    back_edges = 0
    for module, layers in LAYERS.items():
        module_dir = os.path.join(ROOT, "Sources", module)
        rank = {f: i for i, layer in enumerate(layers) for f in layer}
        files = []
        for d, _, names in os.walk(module_dir):
            files += [os.path.join(d, n) for n in names if n.endswith(".swift")]
        declared = {}
        texts = {}
        for path in files:
            texts[path] = strip(open(path, encoding="utf-8").read())
            for name in DECL.findall(texts[path]):
                declared.setdefault(name, folder_of(module_dir, path))
        for path in files:
            folder = folder_of(module_dir, path)
            if folder != "." and folder not in rank:
                print(f"layering: {module}/{folder} is in no layer; add it to scripts/layering.py and docs/ARCHITECTURE.md")
                back_edges += 1
        edges = defaultdict(lambda: defaultdict(set))
        for path in files:
            src = folder_of(module_dir, path)
            if src == "." or src not in rank:
                continue
            for name in set(IDENT.findall(texts[path])):
                dst = declared.get(name)
                if dst and dst != src and dst != "." and dst in rank:
                    edges[(src, dst)][os.path.relpath(path, ROOT)].add(name)
        for (src, dst), where in sorted(edges.items()):
            if graph_only:
                print(f"{module}: {src} -> {dst}")
            elif rank[dst] > rank[src]:
                back_edges += 1
                print(f"layering: {module}/{src} uses {module}/{dst}, a layer above it:")
                for path, names in sorted(where.items()):
                    print(f"  {path}: {', '.join(sorted(names))}")
    if not graph_only:
        if back_edges:
            print(f"layering: {back_edges} back edge(s); move the code to the layer it belongs to (docs/ARCHITECTURE.md)")
            return 1
        print("layering: every folder depends one way")
    return 0


if __name__ == "__main__":
    sys.exit(main())
