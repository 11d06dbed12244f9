// The `mtls` argument parser: subcommand resolution, options, help and error texts.
import Foundation
@testable import MTLSCommandLine

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let arguments = input.fields().prefix(32).map(FuzzedData.text)
        switch ArgumentParser.resolve(Array(arguments), root: MTLSCommand.rootSpec) {
        case .help(let text): check(!text.isEmpty, "empty help")
        case .failure(let text): check(text.hasPrefix("Error: "), "an error text without 'Error: ': \(text.prefix(80))")
        case .run(let path, let spec, let parsed):
            check(path.first == "mtls", "path \(path)")
            for option in spec.options {
                _ = parsed.values(option.key)
                _ = parsed.count(option.key)
            }
        }
    }
}
