#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSTrust

/// Reads `--check` and `--pins` files (or `-` for standard input) into the library's `PinDocument`,
/// with the CLI's exit code and hint.
enum PinFileReader {
    static func read(_ path: String, console: Console) throws(CommandFailure) -> PinDocument {
        let isFolder = path != "-" && FileSystem.isDirectory(path)
        let bytes = isFolder ? [] : try Inputs.read(path, console: console)
        do throws(MTLSTrustError) {
            return isFolder ? try PinDocument(contentsOf: path) : try PinDocument(bytes: bytes, source: path == "-" ? "standard input" : path)
        } catch {
            let hint = "pin files may be in any format `mtls pin --format` writes: \(PinFormat.names)"
            throw CommandFailure(ExitCode.badInput, error.message, hint: error.reason == .malformedInput ? hint : nil)
        }
    }
}
