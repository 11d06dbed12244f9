import CBuildInfo
import CImage
import MTLSCommandLine
import MTLSTrust

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The loader is done with the relocation table: its pages leave the process (0.9 MiB).
_ = mtls_release_relocation_pages()
// `probe URL -o FILE` streams bodies of any size: a long-running process whose peak RSS is mostly
// the code pages mapped around the ones it runs (the kernel's 64 KiB fault-around). There the
// read-only pages of the image and the libraries are mapped one per fault (1 GiB download:
// 14.2 → 10.5 MiB peak RSS; ~650 more, smaller faults). Not for the other commands: short
// processes, where fewer faults matter more (see docs/BENCHMARKS.md).
let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "probe", arguments.contains(where: { $0 == "-o" || $0 == "--output" || $0.hasPrefix("--output=") }) {
    _ = mtls_map_code_page_by_page(1)
}
// Before anything touches OpenSSL: every block it frees is wiped (it frees a copy of PKCS#12
// passwords without clearing it).
OpenSSLInfo.installWipingAllocator()
// The commit BuildInfoPlugin recorded (nil without a git checkout), for `mtls --version`.
let commit = mtls_build_commit().map { String(cString: $0) }
exit(MTLSCommand.run(arguments: Array(arguments), commit: commit))
