import MTLSCommandLine
import MTLSTrust

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Before anything touches OpenSSL: every block it frees is wiped (it frees a copy of PKCS#12
// passwords without clearing it).
OpenSSLInfo.installWipingAllocator()
exit(MTLSCommand.run(arguments: Array(CommandLine.arguments.dropFirst())))
