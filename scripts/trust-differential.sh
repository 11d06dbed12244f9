#!/usr/bin/env bash
# The trust evaluator's fast path against its reference path over the whole x509-limbo slice.
#
#   MTLS_BIN=PATH scripts/trust-differential.sh [run_limbo.py args...]
#
# Runs scripts/conformance.sh --check with MTLS_TRUST_DIFFERENTIAL set: every evaluation of every
# `mtls verify` runs both the reference path (X509_verify_cert on the whole chain, the Swift
# policies, alternative paths) and the fast path (Sources/MTLSTrust/Trust/TrustFastPath.swift),
# armed more eagerly than in normal use (whenever nothing is wrong above the leaf), with both of its
# routes (the check on the undecoded DER and OpenSSL's check of leaf → intermediate), and logs the
# verdicts. Fails when the fast path accepts any chain that the reference path rejects, or when
# the conformance check itself fails. Prints how often the fast path was taken.
set -euo pipefail
cd "$(dirname "$0")/.."
log=${TRUST_DIFFERENTIAL_LOG:-$(mktemp)}
: >"$log"
status=0
MTLS_TRUST_DIFFERENTIAL=$log scripts/conformance.sh --check "$@" || status=$?
evaluations=$(wc -l <"$log")
differences=$(grep -c '^DIFF ' "$log" || true)
fast=$(grep -c 'fast=accept' "$log" || true)
both=$(grep -c '^same fast=accept reference=accept' "$log" || true)
rejected=$(grep -c 'reference=reject' "$log" || true)
ran=$(grep -c 'checks=ran' "$log" || true)
onDER=$(grep -c 'der=accept' "$log" || true)
ranRejected=$(grep 'checks=ran' "$log" | grep -c 'reference=reject' || true)
echo "trust differential: $evaluations evaluations with both paths; the fast path's checks ran on $ran leaves (of which the reference path rejected $ranRejected) and accepted $fast ($both also accepted by the reference path; $onDER of them on the DER alone); the reference path rejected $rejected in all; differences: $differences (log: $log)"
if [[ $differences -gt 0 ]]; then
  grep '^DIFF ' "$log" | head -20 >&2
  echo "trust differential: the fast path accepted chains the reference path rejects" >&2
  exit 1
fi
exit $status
