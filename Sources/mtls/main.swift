import CBuildInfo
import MTLSCommandLine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The commit BuildInfoPlugin recorded (nil without a git checkout), for `mtls --version`.
let commit = mtls_build_commit().map { String(cString: $0) }
exit(MTLSCommand.run(arguments: Array(CommandLine.arguments.dropFirst()), commit: commit))
