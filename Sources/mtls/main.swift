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
let arguments = CommandLine.arguments.dropFirst()
// Before anything touches OpenSSL: every block it frees is wiped (it frees a copy of PKCS#12
// passwords without clearing it).
OpenSSLInfo.installWipingAllocator()
// The process ends when the command does: OpenSSL's tables go with it, not block by block.
OpenSSLInfo.skipCleanupAtExit()
// The commit BuildInfoPlugin recorded (nil without a git checkout), for `mtls --version`.
let commit = mtls_build_commit().map { String(cString: $0) }
// Temporary output files are removed on SIGINT/SIGTERM/SIGHUP; `ulimit -f` gives EFBIG, not a kill.
OutputWriter.installSignalCleanup()
exit(MTLSCommand.run(arguments: Array(arguments), commit: commit))
