#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import MTLSHTTP

/// `probe URL --report FILE.html`: one probe as a page — a sequence diagram of the connection's
/// event log, the chain as sent with the trust verdict, the client-certificate requests, the HTTP
/// exchanges, and the ranked causes with their fixes. Drawn from the probe's JSON only
/// (``ReportRecord``), so it states the facts of the text and JSON reports and nothing more.
enum ProbeReportPage {
    static func html(_ record: ReportRecord) -> String {
        let h = HTMLPage.text
        var body = ""
        let host = record.connection?.serverName ?? hostOf(record.url) ?? "server"
        body += "<h1>mtls probe <span class=\"mono\">\(h(record.url ?? record.name))</span></h1>\n"
        body += verdictBanner(record)
        body += "<h2>What happened</h2>\n"
        body += sequenceDiagram(record, server: host)
        body += connectionSection(record)
        body += chainSection(record)
        body += clientCertificateSection(record)
        body += httpSection(record)
        body += causesSection(record)
        return HTMLPage.document(title: "mtls probe \(record.url ?? record.name)", style: HTMLPage.baseStyle + style, script: "", body: body)
    }

    static func hostOf(_ url: String?) -> String? {
        guard let url, let parsed = try? HTTPSURL(url) else { return nil }
        return parsed.hostHeader
    }

    // MARK: Sections

    static func verdictBanner(_ record: ReportRecord) -> String {
        let h = HTMLPage.text
        guard let verdict = record.verdict else {
            return "<p class=\"banner bad\" id=\"verdict\" data-ok=\"false\">Error: \(h(record.error?.message ?? "no verdict"))</p>\n"
        }
        if verdict.ok {
            let status = record.http?.last.map { " — \($0.status)" } ?? ""
            return "<p class=\"banner ok\" id=\"verdict\" data-ok=\"true\">Verdict: OK\(h(status))</p>\n"
        }
        let top = verdict.causes?.first.map { " — " + $0.cause } ?? ""
        return "<p class=\"banner bad\" id=\"verdict\" data-ok=\"false\">Verdict: FAILED (exit \(record.exitCode))\(h(top))</p>\n"
    }

    static func connectionSection(_ record: ReportRecord) -> String {
        let h = HTMLPage.text
        guard let connection = record.connection else { return "" }
        var rows: [(String, String)] = [("address", connection.address ?? "not connected")]
        if let prefix = connection.notTLS {
            rows.append(("TLS", prefix.hasPrefix("HTTP") ? "none: the port answered with plain HTTP" : "none: the port does not answer with TLS (\"\(prefix)\")"))
        } else if connection.handshakeFinished == true, let version = connection.tlsVersion {
            rows.append(
                (
                    "TLS",
                    version + (connection.cipher.map { ", \($0)" } ?? "") + (connection.alpn.map { ", ALPN \($0)" } ?? "")
                        + (connection.resumed == true ? ", session resumed" : ", new session")
                ))
            rows.append(
                (
                    "renegotiation",
                    version == "TLSv1.3"
                        ? "not in TLS 1.3 (post-handshake auth instead)"
                        : (connection.secureRenegotiation == true ? "secure (RFC 5746) supported" : "server lacks RFC 5746 secure renegotiation")
                ))
            if let count = connection.renegotiations, count > 0 {
                rows.append(
                    (
                        "renegotiated",
                        "\(count) time\(count == 1 ? "" : "s") after the first handshake" + (connection.renegotiationResumed == true ? " (the server resumed the session)" : "")
                    ))
            }
        } else {
            rows.append(("TLS", "handshake not finished"))
        }
        if let name = connection.serverName { rows.append(("SNI", name)) }
        for alert in connection.alerts ?? [] { rows.append(("alert", "\(alert.received ? "received" : "sent") \(alert.level) \"\(alert.description)\"")) }
        return "<h2>Connection</h2>\n<dl class=\"facts\" id=\"connection\">"
            + rows.map { "<dt>\(h($0.0))</dt><dd>\(h($0.1))</dd>" }.joined() + "</dl>\n"
    }

    static func chainSection(_ record: ReportRecord) -> String {
        let h = HTMLPage.text
        guard let chain = record.serverChain, !chain.isEmpty else { return "" }
        var out =
            "<h2>Server chain (as sent)</h2>\n<table id=\"chain\"><thead><tr><th>#</th><th>subject</th><th>issuer</th><th>expires</th><th>key</th><th>verdict</th></tr></thead><tbody>\n"
        for (index, certificate) in chain.enumerated() {
            let findings = (record.trust?.findings ?? []).filter { $0.depth == index }
            var verdict: String
            var cls: String
            if let trust = record.trust {
                if !findings.isEmpty {
                    verdict = findings.map { "✗ \($0.reason)" + ($0.error.map { " (\($0))" } ?? "") }.joined(separator: "; ")
                    cls = "bad"
                } else if trust.trusted {
                    verdict = "✓ trusted"
                    cls = "ok"
                } else {
                    verdict = "no finding at this depth"
                    cls = "muted"
                }
            } else {
                verdict = "not evaluated"
                cls = "muted"
            }
            if let problems = certificate.problems, !problems.isEmpty {
                verdict += "; " + problems.joined(separator: "; ")
                cls = cls == "ok" ? "warn" : cls
            }
            out +=
                "<tr data-depth=\"\(index)\"><td>\(index)</td><td class=\"mono\">\(h(certificate.subject))</td><td class=\"mono\">\(h(certificate.issuer))</td>"
                + "<td>\(h(certificate.notAfter ?? ""))</td><td>\(h(certificate.key ?? ""))</td><td class=\"\(cls) verdict\">\(h(verdict))</td></tr>\n"
        }
        out += "</tbody></table>\n"
        if let trust = record.trust {
            out += "<p id=\"trust\" class=\"\(trust.trusted ? "ok" : "bad")\">" + (trust.trusted ? "trusted" : "NOT trusted (\(h(trust.summary ?? "")))") + "</p>\n"
        }
        if let pins = record.pins {
            out +=
                "<p id=\"pins\" class=\"\(pins.satisfied ? "ok" : "bad")\">pins: "
                + h(pins.satisfied ? "matched: " + (pins.matched ?? []).joined(separator: ", ") : "NO pin matched; presented " + (pins.presented ?? []).joined(separator: ", "))
                + "</p>\n"
        }
        return out
    }

    static func clientCertificateSection(_ record: ReportRecord) -> String {
        let h = HTMLPage.text
        guard let client = record.clientCertificate else { return "" }
        var rows: [(String, String)] = []
        let requests = client.requests ?? []
        if requests.isEmpty {
            if let phase = client.requestPhases?.first.flatMap(TLSMessagePhase.init(rawValue:)) {
                rows.append(("requested", "yes, \(ProbeRules.phaseWords(phase)) (the handshake failed before we answered it)"))
            } else if record.connection?.renegotiationResumed == true {
                rows.append(("requested", "no: the server renegotiated but resumed the session, so it could not ask"))
            } else if client.requested == false {
                rows.append(("requested", "no: the server never asked on this connection"))
            } else {
                rows.append(("requested", "unknown: the handshake did not finish"))
            }
        }
        for request in requests {
            rows.append(("requested", "yes, " + (CertificateRequestPhase(rawValue: request.phase).map(ProbeRules.phaseWords) ?? request.phase)))
            let names = request.acceptedCANames ?? []
            rows.append(("accepted CAs", names.isEmpty ? "none sent (any issuer; IIS 2012+ sends none by default)" : names.joined(separator: "; ")))
            if let sent = request.sent {
                rows.append(("sent", sent + (request.identity.map { " (from \($0))" } ?? "")))
                if !names.isEmpty { rows.append(("fit", request.identityFits == true ? "issuer among the accepted CAs" : "issuer NOT among the accepted CAs")) }
            } else {
                rows.append(("sent", request.hadNoIdentity == true ? "nothing (no identity given: --p12 or --cert/--key)" : "nothing"))
            }
        }
        return "<h2>Client certificate</h2>\n<dl class=\"facts\" id=\"client\">" + rows.map { "<dt>\(h($0.0))</dt><dd>\(h($0.1))</dd>" }.joined() + "</dl>\n"
    }

    static func httpSection(_ record: ReportRecord) -> String {
        let h = HTMLPage.text
        guard let exchanges = record.http, !exchanges.isEmpty else { return "" }
        var out = "<h2>HTTP</h2>\n<table id=\"http\"><thead><tr><th>#</th><th>kind</th><th>request</th><th>status</th><th>meaning</th><th>auth offered</th></tr></thead><tbody>\n"
        for (index, exchange) in exchanges.enumerated() {
            let status = "\(exchange.status)" + (exchange.substatus.map { ".\($0)" } ?? "")
            out +=
                "<tr><td>\(index + 1)</td><td>\(h(exchange.kind))</td><td class=\"mono\">\(h((exchange.method ?? "") + " " + (exchange.url ?? "")))</td>"
                + "<td class=\"status\">\(h(status))</td><td>\(h(exchange.meaning ?? ""))"
                + (exchange.location.map { "<br><span class=\"muted\">location \(h($0))</span>" } ?? "")
                + (exchange.title.map { "<br><span class=\"muted\">title \(h($0))</span>" } ?? "")
                + "</td><td>\(h((exchange.authSchemes ?? []).joined(separator: ", ")))</td></tr>\n"
        }
        return out + "</tbody></table>\n"
    }

    static func causesSection(_ record: ReportRecord) -> String {
        let h = HTMLPage.text
        var out = ""
        if let causes = record.verdict?.causes, !causes.isEmpty {
            out += "<h2>Causes, most likely first</h2>\n<ol class=\"causes\" id=\"causes\">"
            for cause in causes {
                out += "<li data-rule=\"\(h(cause.rule ?? ""))\"><span class=\"cause\">\(h(cause.cause))</span><br><span class=\"fix\">fix: \(h(cause.fix))</span></li>"
            }
            out += "</ol>\n"
        }
        if let warnings = record.verdict?.warnings, !warnings.isEmpty {
            out += "<h2>Warnings</h2>\n<ul id=\"warnings\">"
            for warning in warnings { out += "<li><span class=\"cause\">\(h(warning.cause))</span><br><span class=\"fix\">fix: \(h(warning.fix))</span></li>" }
            out += "</ul>\n"
        }
        if let error = record.error {
            out +=
                "<h2>Error</h2>\n<p id=\"error\" class=\"bad\">\(h(error.message))"
                + (error.hint.map { "<br><span class=\"fix\">\(h($0))</span>" } ?? "") + "</p>\n"
        }
        return out
    }

    // MARK: The sequence diagram

    /// One arrow or note of the diagram.
    struct Step: Equatable {
        enum Direction: String { case toServer = "client", toClient = "server", note = "both" }
        var kind: String
        var direction: Direction
        var label: String
        var phase: String?
        /// `request`, `alert`, `http`, `failure` … (the colour).
        var tone: String
        var detail: String
    }

    /// The diagram's steps, one per event of the log, in order.
    static func steps(_ events: [ReportRecord.Event]) -> [Step] {
        events.map { event in
            let ours = event.sentByUs == true
            let line = event.line ?? event.kind
            switch event.kind {
            case "message":
                let name = event.name ?? "?"
                let tone = name == "CertificateRequest" || name == "HelloRequest" ? "request" : (ours && name.hasPrefix("Certificate") ? "ours" : "tls")
                return Step(kind: "message", direction: ours ? .toServer : .toClient, label: name, phase: event.phase, tone: tone, detail: line)
            case "serverHello":
                return Step(
                    kind: "serverHello", direction: .note, label: "server chose \(event.version ?? "?")" + (event.cipher.map { ", \($0)" } ?? ""), phase: nil, tone: "info",
                    detail: line)
            case "handshakeFinished":
                let what = event.phase == "renegotiation" ? "renegotiation finished" : (event.phase == "post-handshake" ? "post-handshake finished" : "handshake finished")
                return Step(
                    kind: "handshakeFinished", direction: .note, label: "\(what): \(event.version ?? "")" + (event.resumed == true ? ", resumed" : ""), phase: event.phase,
                    tone: "done", detail: line)
            case "alert":
                return Step(
                    kind: "alert", direction: ours ? .toServer : .toClient, label: "alert \(event.level ?? "") \"\(event.description ?? "")\"", phase: nil, tone: "alert",
                    detail: line)
            case "peerClosed":
                return Step(
                    kind: "peerClosed", direction: .toClient, label: event.closeNotify == true ? "close_notify, closed" : "closed without close_notify", phase: nil,
                    tone: event.closeNotify == true ? "tls" : "alert", detail: line)
            case "socketError":
                return Step(kind: "socketError", direction: .note, label: "\(event.operation ?? "socket"): \(event.reason ?? "error")", phase: nil, tone: "alert", detail: line)
            case "notTLS":
                return Step(kind: "notTLS", direction: .toClient, label: "not TLS: \(event.prefix ?? "")", phase: nil, tone: "alert", detail: line)
            case "timeout":
                return Step(
                    kind: "timeout", direction: .note, label: "timeout during \(event.during ?? "?") after \(event.seconds.map { "\($0)" } ?? "?") s", phase: nil, tone: "alert",
                    detail: line)
            case "httpRequest":
                return Step(kind: "httpRequest", direction: .toServer, label: "\(event.method ?? "") \(event.target ?? "")", phase: nil, tone: "http", detail: line)
            case "httpResponse":
                let status = event.status ?? 0
                return Step(
                    kind: "httpResponse", direction: .toClient, label: "\(status) \(event.reason ?? "")", phase: nil, tone: (200...399).contains(status) ? "http" : "httpbad",
                    detail: line)
            default:
                return Step(kind: event.kind, direction: .note, label: event.kind, phase: nil, tone: "info", detail: line)
            }
        }
    }

    /// Exchanges of the login that ran on earlier connections (a redirect to another origin, a new
    /// connection after a close): the log holds the last connection's events only.
    static func earlierExchanges(_ record: ReportRecord) -> [ReportRecord.Exchange] {
        let exchanges = record.http ?? []
        let onThisConnection = (record.events ?? []).filter { $0.kind == "httpResponse" }.count
        return Array(exchanges.prefix(max(0, exchanges.count - onThisConnection)))
    }

    static func sequenceDiagram(_ record: ReportRecord, server: String) -> String {
        let h = HTMLPage.text
        let steps = steps(record.events ?? [])
        let earlier = earlierExchanges(record)
        let width = 820
        let client = 190
        let serverX = 720
        let rowHeight = 28
        let top = 56
        let rows = earlier.count * 2 + (earlier.isEmpty ? 0 : 1) + steps.count
        let height = top + rows * rowHeight + 24
        var out =
            "<svg id=\"sequence\" role=\"img\" aria-label=\"sequence diagram of the connection\" viewBox=\"0 0 \(width) \(height)\" width=\"\(width)\" height=\"\(height)\" xmlns=\"http://www.w3.org/2000/svg\">\n"
        out +=
            "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"context-stroke\"/></marker></defs>\n"
        out += "<text x=\"\(client)\" y=\"20\" text-anchor=\"middle\" font-weight=\"600\" class=\"lane\">client (mtls)</text>"
        out += "<text x=\"\(serverX)\" y=\"20\" text-anchor=\"middle\" font-weight=\"600\" class=\"lane\">server \(h(server))</text>\n"
        out +=
            "<line x1=\"\(client)\" y1=\"30\" x2=\"\(client)\" y2=\"\(height - 8)\" class=\"lifeline\"/><line x1=\"\(serverX)\" y1=\"30\" x2=\"\(serverX)\" y2=\"\(height - 8)\" class=\"lifeline\"/>\n"
        var y = top
        func arrow(_ direction: Step.Direction, label: String, tone: String, cls: String, attributes: String, title: String, phase: String?) {
            out += "<g class=\"\(cls) \(tone)\" \(attributes)><title>\(h(title))</title>"
            if let phase { out += "<text x=\"8\" y=\"\(y)\" class=\"phase\">\(h(phase))</text>" }
            switch direction {
            case .note:
                out += "<rect x=\"\(client - 10)\" y=\"\(y - 15)\" width=\"\(serverX - client + 20)\" height=\"20\" rx=\"4\" class=\"note\"/>"
                out += "<text x=\"\((client + serverX) / 2)\" y=\"\(y - 1)\" text-anchor=\"middle\" class=\"label\">\(h(label))</text>"
            case .toServer, .toClient:
                let (from, to) = direction == .toServer ? (client, serverX) : (serverX, client)
                out += "<line x1=\"\(from)\" y1=\"\(y + 4)\" x2=\"\(to)\" y2=\"\(y + 4)\" class=\"arrow\" marker-end=\"url(#arrow)\"/>"
                out += "<text x=\"\((client + serverX) / 2)\" y=\"\(y - 1)\" text-anchor=\"middle\" class=\"label\">\(h(label))</text>"
            }
            out += "</g>\n"
            y += rowHeight
        }
        for (index, exchange) in earlier.enumerated() {
            let status = "\(exchange.status)" + (exchange.substatus.map { ".\($0)" } ?? "")
            let request = "\(exchange.method ?? "") \(exchange.url ?? "")"
            arrow(
                .toServer, label: request, tone: "http", cls: "hop", attributes: "data-index=\"\(index)\" data-from=\"client\"", title: "earlier connection: \(request)", phase: nil
            )
            arrow(
                .toClient, label: status, tone: exchange.status < 400 ? "http" : "httpbad", cls: "hop", attributes: "data-index=\"\(index)\" data-from=\"server\"",
                title: exchange.meaning ?? status, phase: nil)
        }
        if !earlier.isEmpty {
            out += "<text x=\"\((client + serverX) / 2)\" y=\"\(y - 4)\" text-anchor=\"middle\" class=\"muted\">— the connection whose log follows —</text>\n"
            y += rowHeight
        }
        var lastPhase: String? = nil
        for (index, step) in steps.enumerated() {
            let showPhase = step.phase != nil && step.phase != lastPhase
            if step.phase != nil { lastPhase = step.phase }
            arrow(
                step.direction, label: step.label, tone: step.tone, cls: "ev",
                attributes: "data-index=\"\(index)\" data-kind=\"\(h(step.kind))\" data-from=\"\(step.direction.rawValue)\"", title: step.detail,
                phase: showPhase ? step.phase : nil)
        }
        out += "</svg>\n"
        if steps.isEmpty { out += "<p class=\"muted\">No events were logged (the connection was never opened).</p>\n" }
        return out
    }

    static let style = """
        #sequence{max-width:100%;height:auto;border:1px solid var(--line);border-radius:6px;background:#fff}
        #sequence .lifeline{stroke:#8c959f;stroke-dasharray:4 4}
        #sequence .arrow{stroke:#57606a;stroke-width:1.5}
        #sequence .label{font-size:12.5px;fill:#1f2328}
        #sequence .phase{font-size:11px;fill:var(--muted)}
        #sequence .note{fill:var(--bg);stroke:var(--line)}
        #sequence .request .arrow{stroke:#bc4c00;stroke-width:2.5}#sequence .request .label{fill:#bc4c00;font-weight:700}
        #sequence .ours .arrow{stroke:var(--accent);stroke-width:2.5}#sequence .ours .label{fill:var(--accent);font-weight:700}
        #sequence .alert .arrow{stroke:var(--bad);stroke-width:2.5}#sequence .alert .label{fill:var(--bad);font-weight:700}
        #sequence .http .arrow{stroke:var(--ok);stroke-width:2.5}#sequence .http .label{fill:var(--ok);font-weight:700}
        #sequence .httpbad .arrow{stroke:var(--bad);stroke-width:2.5}#sequence .httpbad .label{fill:var(--bad);font-weight:700}
        #sequence .done .note{fill:#dafbe1}#sequence .muted{fill:var(--muted);font-size:11px}
        """
}
