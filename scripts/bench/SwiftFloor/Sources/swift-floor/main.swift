import FloorVerify
import Glibc

let (status, line) = floorVerify(CommandLine.arguments)
if status == 0 || status == 2 {
    print(line)
} else {
    let message = line + "\n"
    _ = message.withCString { write(2, $0, strlen($0)) }
}
exit(status)
