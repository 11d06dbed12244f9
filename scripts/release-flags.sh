# The `swift build` flags of the shipped binary, sourced by scripts/release.sh, scripts/memory-flat.sh
# and scripts/bench/run_all.sh (BENCH_STATIC=1) so that they all build and measure the same binary
# (and share a build directory without rebuilding):
#   - the Swift runtime linked in (--static-swift-stdlib): the binary and the .deb run on a machine
#     without the Swift toolchain;
#   - lld, the linker that comes with the toolchain.
# Nothing else: no link order, runtime or image tricks for a benchmark's figure.
# Needs ROOT (the package directory).
RELEASE_FLAGS=(
  -c release --static-swift-stdlib
  -Xswiftc -use-ld=lld
)
