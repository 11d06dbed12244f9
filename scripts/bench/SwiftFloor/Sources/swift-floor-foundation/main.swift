// The same verification with FoundationEssentials linked, as every mtls module links it; its line
// of output uses `Date` and `Data` so that the linker keeps it.
import FloorVerify
import FoundationEssentials

floorMain { line in
    let at = CommandLine.arguments.count > 3 ? Double(CommandLine.arguments[3]).map(Date.init(timeIntervalSince1970:)) : nil
    return "\(line) (at \(at?.timeIntervalSince1970 ?? 0), \(Data(line.utf8).count) bytes)"
}
