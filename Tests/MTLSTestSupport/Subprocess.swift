import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a program with posix_spawn and waitpid, reading its stdout to the end. Foundation's
/// `Process.waitUntilExit` can miss the exit of a child that daemonises helpers (seen with the
/// peer start scripts), so the peers use this instead.
public enum Subprocess {
    public struct Result {
        public var status: Int32
        public var stdout: String
    }

    public static func run(_ path: String, _ arguments: [String], directory: String? = nil) -> Result {
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { return Result(status: -1, stdout: "") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addclose(&actions, pipe[0])
        posix_spawn_file_actions_addclose(&actions, pipe[1])
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var command = path
        if let directory {
            // posix_spawn has no chdir action in this glibc: run through a shell in that directory.
            command = "/bin/sh"
            let quoted = ([path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            return run(command, ["-c", "cd '\(directory)' && exec \(quoted)"])
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command, &actions, nil, argv, environ)
        close(pipe[1])
        guard spawned == 0 else {
            close(pipe[0])
            return Result(status: -1, stdout: "")
        }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(pipe[0], &buffer, buffer.count)
            if n > 0 { output += buffer[0..<n] } else if n == 0 || errno != EINTR { break }
        }
        close(pipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitCode = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Result(status: exitCode, stdout: String(decoding: output, as: UTF8.self))
    }
}
