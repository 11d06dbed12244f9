# The `swift build` flags of the shipped binary, sourced by scripts/release.sh, scripts/memory-flat.sh,
# scripts/gen-link-order.sh and scripts/bench/run_all.sh (BENCH_STATIC=1) so that they all build and
# measure the same binary (and share a build directory without rebuilding):
#   - the Swift runtime linked in (--static-swift-stdlib);
#   - one section per function (-function-sections; the C targets -ffunction-sections) and lld
#     placing the functions listed in packaging/link-order.txt first (scripts/gen-link-order.sh
#     makes the list from profiles of the common commands): the code a command runs then lies on
#     few pages, and the kernel maps in little else. Peak RSS of the 1 GiB download through the CLI
#     18.5 → 15.9 MiB (docs/BENCHMARKS.md, "1 GiB download through the CLI");
#   - concrete generic types' metadata fetched through their accessors, which take the conformances
#     they need as arguments, instead of by mangled name (-disable-concrete-type-metadata-mangled-
#     name-accessors): by name, the runtime demangles the name and looks each conformance up by
#     scanning all 3,580 conformance records of the image, ~180,000 instructions the first time a
#     (type, protocol) pair is asked for, eight of them in one `mtls verify` (docs/BENCHMARKS.md,
#     "The floor of a Swift process");
#   - the C++ runtime linked in (packaging/static-libstdc++/libstdc++.so is a linker script that
#     turns the Swift runtime's -lstdc++ into GCC's libstdc++.a): libstdc++.so.6 is not loaded (its
#     0.9 MiB resident, its relocations and symbol look-ups at every start).
# Needs ROOT (the package directory). lld comes with the Swift toolchain.
RELEASE_FLAGS=(
  -c release --static-swift-stdlib
  -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections
  -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors
  -Xswiftc -use-ld=lld -Xlinker "-L$ROOT/packaging/static-libstdc++"
  -Xlinker "--symbol-ordering-file=$ROOT/packaging/link-order.txt" -Xlinker --no-warn-symbol-ordering
)
