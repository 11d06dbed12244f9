#!/usr/bin/env bash
# Writes the files generated from the option declarations (Sources/MTLSCommandLine: OptionSpec,
# CommandSpec) with the built binary:
#   docs/CLI.md            `mtls generate-docs markdown`
#   docs/mtls.1            `mtls generate-docs man`
#   completions/mtls.bash  `mtls completion bash`  (and _mtls for zsh, mtls.fish for fish)
#
#   scripts/gen-docs.sh            build (debug) and write them
#   scripts/gen-docs.sh --check    write nothing; exit 1 when a committed file differs
#   MTLS_BIN=path/to/mtls ...      use that binary instead of building
# GeneratedDocsTests (swift test) checks the same, so CI fails when they drift.
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
[[ "${1:-}" == "--check" ]] && check=1

if [[ -z "${MTLS_BIN:-}" ]]; then
  swift build --product mtls >&2
  MTLS_BIN="$(swift build --show-bin-path)/mtls"
fi

outputs=(
  "docs/CLI.md:generate-docs markdown"
  "docs/mtls.1:generate-docs man"
  "completions/mtls.bash:completion bash"
  "completions/_mtls:completion zsh"
  "completions/mtls.fish:completion fish"
)
mkdir -p docs completions
status=0
for entry in "${outputs[@]}"; do
  path=${entry%%:*}
  read -r -a arguments <<<"${entry#*:}"
  generated=$(mktemp)
  "$MTLS_BIN" "${arguments[@]}" >"$generated"
  if [[ $check == 1 ]]; then
    if ! cmp -s "$generated" "$path"; then
      echo "gen-docs: $path differs from \`mtls ${arguments[*]}\`; run scripts/gen-docs.sh and commit it" >&2
      diff -u "$path" "$generated" | head -20 >&2 || true
      status=1
    fi
    rm -f "$generated"
  else
    mv "$generated" "$path"
    chmod 644 "$path"
    echo "gen-docs: wrote $path"
  fi
done
exit $status
