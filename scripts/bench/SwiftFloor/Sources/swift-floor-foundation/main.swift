// The same verification with FoundationEssentials linked, as every mtls module links it; one line
// of output uses `Date` and `Data` so that the linker keeps it.
import FloorVerify
import FoundationEssentials
import Glibc

let (status, line) = floorVerify(CommandLine.arguments)
let at = CommandLine.arguments.count > 3 ? Double(CommandLine.arguments[3]).map(Date.init(timeIntervalSince1970:)) : nil
let bytes = Data(line.utf8)
if status == 0 || status == 2 {
    print("\(line) (at \(at?.timeIntervalSince1970 ?? 0), \(bytes.count) bytes)")
} else {
    let message = line + "\n"
    _ = message.withCString { write(2, $0, strlen($0)) }
}
exit(status)
