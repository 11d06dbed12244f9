import MTLSCommandLine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

exit(MTLSCommand.run(arguments: Array(CommandLine.arguments.dropFirst())))
