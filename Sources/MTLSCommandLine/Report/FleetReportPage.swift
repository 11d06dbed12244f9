#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One endpoint of a fleet as the page shows it, read from its probe record only.
struct FleetRow: Sendable {
    var name: String
    var exitCode: Int
    /// `200`, `403.7`, or empty when no answer came.
    var status: String
    /// `TLSv1.3`, or nil when no handshake finished.
    var tlsVersion: String?
    /// nil when the chain was never evaluated.
    var trusted: Bool?
    var trustSummary: String?
    /// Trust findings and ordering problems of the chain as sent.
    var chainProblems: [String]
    /// The phase of the first CertificateRequest; "" when the server did not ask; nil when unknown.
    var certificatePhase: String?
    var leafSubject: String?
    var leafNotAfter: Date?
    /// nil when no pins were checked.
    var pinsSatisfied: Bool?
    var presentedPins: [String]
    /// The top cause's rule and words, or the error that stopped the probe.
    var rule: String?
    var cause: String?

    init(_ record: some ProbeRecordFields) {
        name = record.name
        exitCode = record.exitCode
        if let last = record.http?.last { status = "\(last.status)" + (last.substatus.map { ".\($0)" } ?? "") } else { status = "" }
        tlsVersion = record.connection?.handshakeFinished == true ? record.connection?.tlsVersion : nil
        trusted = record.trust?.trusted
        trustSummary = record.trust?.summary
        var problems = (record.trust?.findings ?? []).map { "depth \($0.depth): \($0.reason)" }
        let sent = record.serverChain ?? []
        for index in sent.indices.dropFirst() where sent[index - 1].issuer != sent[index].subject {
            problems.append("chain not in order (certificate \(index) does not issue certificate \(index - 1))")
            break
        }
        chainProblems = problems
        if let phase = record.clientCertificate?.requestPhases?.first ?? record.clientCertificate?.requests?.first?.phase {
            certificatePhase = phase
        } else if record.clientCertificate?.requested == false {
            certificatePhase = ""
        } else {
            certificatePhase = nil
        }
        leafSubject = record.leaf?.subject
        leafNotAfter = record.leaf?.notAfter.flatMap { Timestamp.parse($0) }
        pinsSatisfied = record.pins?.satisfied
        presentedPins = record.pins?.presented ?? []
        if let top = record.verdict?.causes?.first {
            rule = top.rule
            cause = top.cause
        } else if let error = record.error, record.verdict == nil {
            cause = error.message
        }
    }

    var ok: Bool { exitCode == 0 }
    var oldTLS: Bool { tlsVersion == "TLSv1" || tlsVersion == "TLSv1.0" || tlsVersion == "TLSv1.1" || tlsVersion == "SSLv3" }
    func days(from now: Date) -> Int? { leafNotAfter.map { Int(($0.timeIntervalSince(now) / 86400).rounded(.down)) } }
}

/// `mtls report FLEET.jsonl… --out FILE.html` and `probe --targets … --report FILE.html`: a fleet
/// on one page — counts, an expiry timeline of the leaf certificates, and tables of the endpoints
/// that ask for client certificates, their TLS versions, trust and chain problems and pin drift.
/// Sortable and filterable with a little inline script; every table is there without it.
enum FleetReportPage {
    struct Summary: Equatable {
        var endpoints = 0, ok = 0, refused = 0, unreachable = 0, otherErrors = 0
        var askDuringHandshake = 0, askAfterRequest = 0, oldTLS = 0, untrusted = 0, chainProblems = 0
        var expired = 0, within30 = 0, within90 = 0, pinDrift = 0, pinsChecked = 0
    }

    static func summary(_ rows: [FleetRow], now: Date) -> Summary {
        var s = Summary()
        for row in rows {
            s.endpoints += 1
            switch row.exitCode {
            case 0: s.ok += 1
            case 1: s.refused += 1
            case 4: s.unreachable += 1
            default: s.otherErrors += 1
            }
            if let phase = row.certificatePhase, !phase.isEmpty { if phase == "handshake" { s.askDuringHandshake += 1 } else { s.askAfterRequest += 1 } }
            if row.oldTLS { s.oldTLS += 1 }
            if row.trusted == false { s.untrusted += 1 }
            if !row.chainProblems.isEmpty { s.chainProblems += 1 }
            if let days = row.days(from: now) {
                if days < 0 { s.expired += 1 } else if days < 30 { s.within30 += 1 } else if days < 90 { s.within90 += 1 }
            }
            if let pins = row.pinsSatisfied {
                s.pinsChecked += 1
                if !pins { s.pinDrift += 1 }
            }
        }
        return s
    }

    static func html(_ rows: [FleetRow], now: Date, sources: [String]) -> String {
        let h = HTMLPage.text
        let s = summary(rows, now: now)
        var body = "<h1>mtls fleet report</h1>\n"
        body +=
            "<p class=\"muted\">\(s.endpoints) endpoint\(s.endpoints == 1 ? "" : "s") from \(h(sources.joined(separator: ", "))); days counted from \(h(Timestamp.rfc3339(now)))</p>\n"
        var counts: [(String, String, Int, String)] = [
            ("endpoints", "endpoints", s.endpoints, ""), ("ok", "OK", s.ok, "ok"), ("refused", "refused or failed (exit 1)", s.refused, s.refused > 0 ? "bad" : ""),
            ("unreachable", "network or TLS failure (exit 4)", s.unreachable, s.unreachable > 0 ? "bad" : ""),
            ("other", "other errors", s.otherErrors, s.otherErrors > 0 ? "bad" : ""),
            ("ask-handshake", "ask for a client certificate in the handshake", s.askDuringHandshake, ""),
            ("ask-after", "ask after the request (renegotiation, post-handshake)", s.askAfterRequest, ""),
            ("old-tls", "TLS 1.0/1.1", s.oldTLS, s.oldTLS > 0 ? "bad" : ""), ("untrusted", "untrusted chains", s.untrusted, s.untrusted > 0 ? "bad" : ""),
            ("chain-problems", "with chain problems", s.chainProblems, s.chainProblems > 0 ? "bad" : ""),
            ("expired", "leaf expired", s.expired, s.expired > 0 ? "bad" : ""), ("within30", "leaf expires in < 30 days", s.within30, s.within30 > 0 ? "warn" : ""),
            ("within90", "leaf expires in 30–90 days", s.within90, s.within90 > 0 ? "warn" : ""),
        ]
        if s.pinsChecked > 0 { counts.append(("pin-drift", "pin drift (no pin matched)", s.pinDrift, s.pinDrift > 0 ? "bad" : "")) }
        body +=
            "<div id=\"summary\" class=\"cards\">" + counts.map { "<div class=\"card \($0.3)\" data-count=\"\($0.0)\"><b>\($0.2)</b><span>\(h($0.1))</span></div>" }.joined()
            + "</div>\n"
        body += "<h2>Leaf certificate expiry</h2>\n" + timeline(rows, now: now)

        let asking = rows.filter { ($0.certificatePhase ?? "").isEmpty == false }
        body += section(
            id: "client-certs", title: "Endpoints that ask for a client certificate (\(asking.count))", headers: ["endpoint", "asked", "HTTP", "result"], limit: sectionLimit,
            rows: asking.map { row in
                [
                    cell(row.name, mono: true), cell(row.certificatePhase == "handshake" ? "in the handshake" : "after the request (\(row.certificatePhase ?? ""))"),
                    cell(row.status),
                    cell(row.ok ? "OK" : (row.cause ?? "exit \(row.exitCode)"), tone: row.ok ? "ok" : "bad"),
                ]
            })

        var versions: [String: Int] = [:]
        for row in rows { versions[row.tlsVersion ?? "no TLS session", default: 0] += 1 }
        body +=
            "<h2>TLS versions</h2>\n<table id=\"tls-versions\"><thead><tr><th>version</th><th>endpoints</th></tr></thead><tbody>"
            + versions.sorted { ($0.key.hasPrefix("no") ? 1 : 0, $1.key) < ($1.key.hasPrefix("no") ? 1 : 0, $0.key) }.map {
                "<tr data-version=\"\(h($0.key))\"><td>\(h($0.key))</td><td class=\"num\">\($0.value)</td></tr>"
            }.joined()
            + "</tbody></table>\n"
        let old = rows.filter(\.oldTLS)
        if !old.isEmpty {
            body += section(
                id: "old-tls", title: "Endpoints on TLS 1.0/1.1 (\(old.count))", headers: ["endpoint", "TLS"], limit: sectionLimit,
                rows: old.map { [cell($0.name, mono: true), cell($0.tlsVersion ?? "", tone: "bad")] })
        }
        let problems = rows.filter { $0.trusted == false || !$0.chainProblems.isEmpty }
        body += section(
            id: "trust-problems", title: "Trust and chain problems (\(problems.count))", headers: ["endpoint", "trust", "problems"], limit: sectionLimit,
            rows: problems.map { row in
                [
                    cell(row.name, mono: true), cell(row.trusted == false ? "NOT trusted (\(row.trustSummary ?? ""))" : "trusted", tone: row.trusted == false ? "bad" : "ok"),
                    cell(row.chainProblems.joined(separator: "; ")),
                ]
            })
        if s.pinsChecked > 0 {
            let drift = rows.filter { $0.pinsSatisfied == false }
            body += section(
                id: "pin-drift", title: "Pin drift (\(drift.count) of \(s.pinsChecked) checked)", headers: ["endpoint", "presented"], limit: sectionLimit,
                rows: drift.map { [cell($0.name, mono: true), cell($0.presentedPins.joined(separator: " "), mono: true)] })
        }
        body += section(
            id: "endpoints", title: "All endpoints (\(rows.count))",
            headers: ["endpoint", "exit", "HTTP", "TLS", "trust", "client cert", "leaf expires", "days", "pins", "top cause"],
            rows: rows.map { row in
                let days = row.days(from: now)
                return [
                    cell(row.name, mono: true), cell("\(row.exitCode)", tone: row.ok ? "ok" : "bad", sort: "\(row.exitCode)"), cell(row.status),
                    cell(row.tlsVersion ?? "—", tone: row.oldTLS ? "bad" : ""),
                    cell(row.trusted.map { $0 ? "trusted" : "NOT trusted" } ?? "—", tone: row.trusted == false ? "bad" : ""),
                    cell(row.certificatePhase.map { $0.isEmpty ? "no" : $0 } ?? "unknown"),
                    cell(row.leafNotAfter.map { String(Timestamp.rfc3339($0).prefix(10)) } ?? "—"),
                    cell(days.map { "\($0)" } ?? "—", tone: days.map { $0 < 0 ? "bad" : ($0 < 90 ? "warn" : "") } ?? "", sort: days.map { "\($0)" } ?? "99999999"),
                    cell(row.pinsSatisfied.map { $0 ? "match" : "DRIFT" } ?? "—", tone: row.pinsSatisfied == false ? "bad" : ""),
                    cell(row.rule.map { "[\($0)] " }.map { $0 + (row.cause ?? "") } ?? (row.cause ?? "OK"), tone: row.ok ? "" : "bad"),
                ]
            })
        return HTMLPage.document(title: "mtls fleet report (\(rows.count) endpoints)", style: HTMLPage.baseStyle + style, script: script, body: body)
    }

    // MARK: Pieces

    struct Cell {
        var text: String
        var tone = ""
        var mono = false
        var sort: String? = nil
    }

    static func cell(_ text: String, tone: String = "", mono: Bool = false, sort: String? = nil) -> Cell { Cell(text: text, tone: tone, mono: mono, sort: sort) }

    /// A titled table with a filter box (shown by the script) and sortable headers.
    ///
    /// A table other than the complete one stops at `limit` rows and says so: every endpoint is in
    /// the complete table, whose columns hold the same facts (a page of 10,000 endpoints stays quick).
    static func section(id: String, title: String, headers: [String], limit: Int = .max, rows allRows: [[Cell]]) -> String {
        let h = HTMLPage.text
        var out = "<h2>\(h(title))</h2>\n"
        if allRows.isEmpty { return out + "<p class=\"muted\" id=\"\(id)-none\">none</p>\n" }
        let rows = allRows.prefix(limit)
        if rows.count < allRows.count {
            out += "<p class=\"muted\" id=\"\(id)-more\">The first \(rows.count) of \(allRows.count); all are in the table of all endpoints below.</p>\n"
        }
        out +=
            "<p class=\"filter\" hidden><input type=\"search\" placeholder=\"filter rows\" aria-label=\"filter \(h(title))\" data-table=\"\(id)\"> <span class=\"shown\"></span> <button type=\"button\" hidden>show all</button></p>\n"
        // Off-screen tables are laid out when scrolled to (content-visibility), not on load.
        out += "<div class=\"table-wrap\"><table id=\"\(id)\" class=\"sortable\"><thead><tr>" + headers.map { "<th>\(h($0))</th>" }.joined() + "</tr></thead><tbody>\n"
        out.reserveCapacity(out.utf8.count + rows.count * 200)
        for row in rows {
            out += "<tr>"
            for c in row {
                var classes: [String] = []
                if !c.tone.isEmpty { classes.append(c.tone) }
                if c.mono { classes.append("mono") }
                out +=
                    "<td" + (classes.isEmpty ? "" : " class=\"\(classes.joined(separator: " "))\"") + (c.sort.map { " data-sort=\"\(h($0))\"" } ?? "") + ">" + h(c.text) + "</td>"
            }
            out += "</tr>\n"
        }
        return out + "</tbody></table></div>\n"
    }

    /// The most rows a table other than the complete one shows.
    static let sectionLimit = 1000

    /// Weekly bars of leaf expiry from 4 weeks back to a year ahead, with the expired and later
    /// ones in a bar of their own at each end, and marks at 30 and 90 days.
    static func timeline(_ rows: [FleetRow], now: Date) -> String {
        let h = HTMLPage.text
        let weeks = 56
        let first = -4
        var bins = Array(repeating: 0, count: weeks + 2)  // [0]: before, [weeks+1]: later
        var known = 0
        for row in rows {
            guard let notAfter = row.leafNotAfter else { continue }
            known += 1
            let week = Int((notAfter.timeIntervalSince(now) / (7 * 86400)).rounded(.down)) - first
            bins[week < 0 ? 0 : (week >= weeks ? weeks + 1 : week + 1)] += 1
        }
        guard known > 0 else { return "<p class=\"muted\" id=\"timeline-none\">No leaf certificate was received.</p>\n" }
        let width = 1000
        let height = 200
        let left = 40
        let barArea = 150
        let barWidth = (width - left - 10) / (weeks + 2)
        let highest = max(1, bins.max() ?? 1)
        var out =
            "<svg id=\"timeline\" role=\"img\" aria-label=\"leaf certificate expiry by week\" viewBox=\"0 0 \(width) \(height)\" width=\"100%\" xmlns=\"http://www.w3.org/2000/svg\">\n"
        func x(_ bin: Int) -> Int { left + bin * barWidth }
        let nowX = x(1 - first)
        for (days, label) in [(0, "now"), (30, "30 d"), (90, "90 d"), (365, "1 y")] {
            let lineX = nowX + days * barWidth / 7
            out += "<line x1=\"\(lineX)\" y1=\"10\" x2=\"\(lineX)\" y2=\"\(barArea + 12)\" class=\"mark\"/><text x=\"\(lineX + 3)\" y=\"20\" class=\"axis\">\(label)</text>"
        }
        for (bin, count) in bins.enumerated() where count > 0 {
            let barHeight = max(2, count * (barArea - 20) / highest)
            let title: String
            let cls: String
            if bin == 0 {
                title = "\(count) expired more than 4 weeks ago"
                cls = "expired"
            } else if bin == weeks + 1 {
                title = "\(count) expire more than a year from now"
                cls = "later"
            } else {
                let start = now.addingTimeInterval(Double((bin - 1 + first) * 7) * 86400)
                title = "\(count) expire in the week from \(Timestamp.rfc3339(start).prefix(10))"
                let daysAhead = (bin - 1 + first) * 7
                cls = daysAhead < 0 ? "expired" : (daysAhead < 30 ? "soon" : (daysAhead < 90 ? "near" : "later"))
            }
            out +=
                "<rect class=\"bin \(cls)\" data-count=\"\(count)\" x=\"\(x(bin) + 1)\" y=\"\(barArea + 10 - barHeight)\" width=\"\(barWidth - 2)\" height=\"\(barHeight)\"><title>\(h(title))</title></rect>"
        }
        out += "<text x=\"\(x(0))\" y=\"\(barArea + 28)\" class=\"axis\">expired</text><text x=\"\(x(weeks + 1) - 20)\" y=\"\(barArea + 28)\" class=\"axis\">later</text>"
        for month in stride(from: 0, through: 12, by: 2) {
            let date = now.addingTimeInterval(Double(month) * 30.44 * 86400)
            out += "<text x=\"\(nowX + Int(Double(month) * 30.44) * barWidth / 7)\" y=\"\(barArea + 42)\" class=\"axis\">\(Timestamp.rfc3339(date).prefix(7))</text>"
        }
        out += "<text x=\"4\" y=\"\(barArea + 10)\" class=\"axis\">0</text><text x=\"4\" y=\"\(barArea + 10 - (barArea - 20))\" class=\"axis\">\(highest)</text>\n</svg>\n"
        return out
    }

    static let style = """
        .cards{display:flex;flex-wrap:wrap;gap:8px}.card{border:1px solid var(--line);border-radius:6px;padding:6px 10px;min-width:120px;background:var(--bg)}
        .card b{display:block;font-size:20px}.card span{color:var(--muted);font-size:12px}.card.bad b{color:var(--bad)}.card.warn b{color:var(--warn)}.card.ok b{color:var(--ok)}
        #timeline .bin{fill:#8c959f}#timeline .expired{fill:var(--bad)}#timeline .soon{fill:#e16f24}#timeline .near{fill:#d4a72c}#timeline .later{fill:#4ac26b}
        #timeline .mark{stroke:#57606a;stroke-dasharray:3 3}#timeline .axis{font-size:11px;fill:var(--muted)}
        .table-wrap{content-visibility:auto;contain-intrinsic-size:auto 800px}
        #endpoints{table-layout:fixed}#endpoints th:nth-child(1){width:22%}#endpoints th:nth-child(2){width:3.5em}#endpoints th:nth-child(3){width:4.5em}
        #endpoints th:nth-child(4){width:5.5em}#endpoints th:nth-child(5){width:7em}#endpoints th:nth-child(6){width:8em}#endpoints th:nth-child(7){width:6.5em}
        #endpoints th:nth-child(8){width:4em}#endpoints th:nth-child(9){width:4em}
        th{cursor:pointer}td.num{text-align:right}.filter input{width:320px;padding:3px 6px}
        th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
        """

    /// Sorting by a header click, filtering by text, and the first 500 matching rows of a table
    /// shown (a button shows them all): a browser lays out only what is shown, so 10,000 endpoints
    /// sort and filter at once. Without the script, every row is there.
    static let script = """
        (function(){
        "use strict";
        var PAGE=500;
        function key(td){var s=td.getAttribute("data-sort");var t=s===null?td.textContent:s;var n=Number(t);return t!==""&&!isNaN(n)?n:t.toLowerCase();}
        function State(table){this.table=table;this.query="";this.limit=PAGE;this.texts=new Map();this.counter=null;this.all=null;}
        State.prototype.text=function(row){var t=this.texts.get(row);if(t===undefined){t=row.textContent.toLowerCase();this.texts.set(row,t);}return t;};
        State.prototype.apply=function(){
          var rows=this.table.tBodies[0].rows,q=this.query,n=0;
          for(var i=0;i<rows.length;i++){var hit=q===""||this.text(rows[i]).indexOf(q)>=0;if(hit){n++;}rows[i].hidden=!hit||n>this.limit;}
          if(this.counter){this.counter.textContent=(n>this.limit?"first "+this.limit+" of ":"")+n+" matching of "+rows.length+" rows";}
          if(this.all){this.all.hidden=n<=this.limit;this.all.textContent="show all "+n;}
        };
        var states=new Map();
        document.querySelectorAll("table.sortable").forEach(function(table){
          var state=new State(table);states.set(table.id,state);
          var heads=table.tHead.rows[0].cells;
          Array.prototype.forEach.call(heads,function(th,col){th.tabIndex=0;th.addEventListener("click",function(){
            var dir=th.getAttribute("aria-sort")==="ascending"?-1:1;
            Array.prototype.forEach.call(heads,function(o){o.removeAttribute("aria-sort");});
            th.setAttribute("aria-sort",dir>0?"ascending":"descending");
            var body=table.tBodies[0];
            var keyed=Array.prototype.map.call(body.rows,function(r){return [key(r.cells[col]),r];});
            keyed.sort(function(a,b){var x=a[0],y=b[0];if(typeof x!==typeof y){x=String(x);y=String(y);}return x<y?-dir:(x>y?dir:0);});
            var fresh=body.cloneNode(false);keyed.forEach(function(k){fresh.appendChild(k[1]);});body.parentNode.replaceChild(fresh,body);
            state.apply();
          });});
        });
        document.querySelectorAll(".filter").forEach(function(p){
          var input=p.querySelector("input");var state=states.get(input.getAttribute("data-table"));
          p.hidden=false;state.counter=p.querySelector(".shown");state.all=p.querySelector("button");
          input.addEventListener("input",function(){state.query=input.value.toLowerCase();state.limit=PAGE;state.apply();});
          state.all.addEventListener("click",function(){state.limit=Infinity;state.apply();});
          state.apply();
        });
        })();
        """
}
