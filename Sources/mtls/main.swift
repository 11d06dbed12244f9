import CBuildInfo
import MTLSCommandLine
import MTLSTrust

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let arguments = CommandLine.arguments.dropFirst()
// Before anything touches OpenSSL: every block it frees is wiped (it frees a copy of PKCS#12
// passwords without clearing it).
OpenSSLInfo.installWipingAllocator()
// OpenSSL's tables are left to the kernel at exit: a command can end while a name lookup still
// runs on another thread, and an atexit teardown would free tables that thread may still use.
OpenSSLInfo.skipCleanupAtExit()
// The commit BuildInfoPlugin recorded (nil without a git checkout), for `mtls --version`.
let commit = mtls_build_commit().map { String(cString: $0) }
// Temporary output files are removed on SIGINT/SIGTERM/SIGHUP; `ulimit -f` gives EFBIG, not a kill.
OutputWriter.installSignalCleanup()
exit(MTLSCommand.run(arguments: Array(arguments), commit: commit))
