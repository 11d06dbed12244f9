// Set-Cookie parsing and storage (RFC 6265), cookie selection, and the Netscape cookie-file format.
import Foundation
import MTLSHTTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    runFuzzer(data, size) { input in
        let now = Date(timeIntervalSince1970: 1_780_272_000)
        let hosts = ["https://www.example.com/a/b", "https://127.0.0.1:8443/", "https://[::1]/x/", "https://example.co.uk/"]
        let url = try! HTTPSURL(hosts[input.choice(hosts.count)])
        let jar = CookieJar(maximumPerDomain: 20, maximumTotal: 50)
        let fields = input.fields()
        for field in fields.prefix(64) {
            _ = jar.store(FuzzedData.text(field), from: url, now: now).description
        }
        _ = jar.cookies(for: url, now: now).map(\.description)
        _ = jar.cookieHeader(for: url, context: .crossSiteNavigation(method: "POST"), now: now)
        let file = jar.netscapeFormat(now: now)
        let again = CookieJar()
        _ = again.load(netscapeFormat: file, now: now)
        // The same bytes read as a cookie file.
        _ = CookieJar().load(netscapeFormat: FuzzedData.text(Array(fields.joined(separator: [0x0A]))), now: now)
    }
}
