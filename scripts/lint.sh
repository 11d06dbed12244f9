#!/usr/bin/env bash
# Lints Sources/, Tests/ and Fuzz/ with the toolchain's `swift format` and the committed .swift-format.
#   scripts/lint.sh          report (exit 1 on any finding)
#   scripts/lint.sh --fix    reformat in place
set -euo pipefail
cd "$(dirname "$0")/.."
if ! swift format --version >/dev/null 2>&1; then
  echo "lint: swift format is not available in this toolchain; skipped" >&2
  exit 0
fi
if [[ "${1:-}" == "--fix" ]]; then
  swift format format --in-place --recursive --parallel Sources Tests Fuzz Package.swift
  exit 0
fi
swift format lint --strict --recursive --parallel Sources Tests Fuzz Package.swift
echo "lint: clean"
