#!/usr/bin/env bash
# Builds the DocC catalogs of the library (Sources/MTLSTrust/MTLSTrust.docc, Sources/MTLSHTTP/MTLSHTTP.docc)
# with the toolchain's `docc`, from the symbol graphs of a normal debug build (no extra package, no
# second compile). Fails when a catalog page has a warning (a broken symbol link, a missing article);
# doc-comment warnings in Sources are counted and listed.
#   scripts/docs.sh              build into .build/docs/<Module>.doccarchive
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v docc >/dev/null 2>&1; then
  echo "docs: docc is not in this toolchain; skipped" >&2
  exit 0
fi
sg_log=$(mktemp)
swift package dump-symbol-graph --minimum-access-level public >"$sg_log" 2>&1 || { cat "$sg_log" >&2; exit 1; }
rm -f "$sg_log"
graphs="$(swift build --show-bin-path)/../symbolgraph"
out=.build/docs
mkdir -p "$out"
status=0
for module in MTLSTrust MTLSHTTP; do
  dir=$(mktemp -d)
  cp "$graphs/$module.symbols.json" "$dir/"
  cp "$graphs/$module"@*.symbols.json "$dir/" 2>/dev/null || true
  log="$out/$module.log"
  if ! docc convert "Sources/$module/$module.docc" --fallback-display-name "$module" \
      --fallback-bundle-identifier "org.mtls.$module" --additional-symbol-graph-dir "$dir" \
      --output-path "$out/$module.doccarchive" >"$log" 2>&1; then
    cat "$log" >&2
    echo "docs: docc failed for $module" >&2
    status=1
  fi
  rm -rf "$dir"
  # A diagnostic's location line follows it: "--> FILE:LINE". Pages of the catalog must be clean.
  catalog=$(grep -E -A1 '^(warning|error):' "$log" | grep -E -B1 -- '--> [^ ]*\.md:' | grep -E '^(warning|error):' || true)
  source=$(grep -E -A1 '^(warning|error):' "$log" | grep -E -B1 -- '--> [^ ]*\.swift:' | grep -cE '^(warning|error):' || true)
  if [[ -n "$catalog" ]]; then
    echo "$catalog" >&2
    echo "docs: $module's catalog has the warnings above (see $log)" >&2
    status=1
  fi
  pages=$(find "$out/$module.doccarchive/data/documentation" -name '*.json' 2>/dev/null | wc -l)
  echo "docs: $module — $pages pages in $out/$module.doccarchive; doc-comment warnings in Sources: $source (listed in $log)"
done
exit $status
