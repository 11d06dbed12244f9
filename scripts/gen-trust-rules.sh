#!/usr/bin/env bash
# Regenerates docs/TRUST-RULES.md from the rule catalogue (Sources/MTLSTrust/Trust/Rules/
# TrustRuleCatalogue.swift). TrustRuleTableTests fails when the committed file differs.
# Usage: scripts/gen-trust-rules.sh
set -euo pipefail
cd "$(dirname "$0")/.."
touch docs/TRUST-RULES.md
MTLS_WRITE_TRUST_RULES=1 swift test --filter TrustRuleTableTests/testCommittedDocumentIsTheCatalogue >/dev/null
echo "docs/TRUST-RULES.md regenerated ($(grep -c '^| `' docs/TRUST-RULES.md) rules)"
