import Foundation
import PushBridgeJSON
import PushBridgeServiceConformance
import PushBridgeTestSupport
import Testing

/// What a team's own server is judged on: the vendor-only service fixtures (those a server that is
/// not PushBridge runs) must together touch every canonical field the `rest` entries of `Mappings/`
/// name, and most service fixtures must be vendor-only. A field no vendor-only fixture touches
/// fails this test unless it is explained below; an explanation for a field that is touched fails
/// it too, so the list cannot go stale.
@Suite("Service fixture coverage")
struct ServiceFixtureCoverageTests {
    /// Canonical fields no vendor-only fixture can touch, and why.
    static let explained: [String: String] = [
        "message.androidOptions":
            "AndroidInfo has no APNs effect; tencent/010 sends it, native because its receiver set a token without going to the background, "
            + "a client-SDK state no REST call makes",
        "user.nameCards":
            "a name card shows only in a group push that names its group, and send_group_msg carries no group name; tencent/015 sets one "
            + "over REST in a fixture that is native for its agora-silent receiver",
    ]

    /// One `rest` entry of a mapping: `METHOD /path FIELD` and the canonical fields it writes.
    struct RESTEntry {
        var method: String
        /// Path segments after `/{org}/{app}`: `{…}` matches any segment, `a|b` either.
        var segments: [Substring]
        var field: [String]
        var canonical: [String]
        /// For the `ext` entries: each SDK message key (`message.ext.…`) and its canonical fields.
        var extensionKeys: [(path: [String], canonical: [String])]

        func matches(_ method: String, _ path: String) -> Bool {
            let parts = path.split(separator: "?", maxSplits: 1)[0].split(separator: "/")
            guard method == self.method, parts.count == segments.count else { return false }
            return zip(segments, parts).allSatisfy { pattern, part in pattern.hasPrefix("{") || pattern.split(separator: "|").contains(part) }
        }
    }

    static func entries() throws -> [RESTEntry] {
        var entries: [RESTEntry] = []
        for dialect in ["easemob-legacy", "agora-silent", "tencent-tim"] {
            let mapping = try fixtureDocument("Mappings/\(dialect).json")
            let all = mapping["entries"]?.arrayValue ?? []
            var canonicalOf: [String: [String]] = [:]
            for entry in all { if let input = entry["input"]?.stringValue { canonicalOf[input] = Self.strings(entry["canonical"]) } }
            for entry in all where entry["kind"]?.stringValue == "rest" {
                let words = try #require(entry["input"]?.stringValue).split(separator: " ", maxSplits: 2)
                try #require(words.count == 3, "\(dialect): \(words)")
                var segments = words[1].split(separator: "/")
                if segments.starts(with: ["{org}", "{app}"]) { segments.removeFirst(2) }
                let keys = Self.strings(entry["via"]).filter { $0.hasPrefix("message.ext.") }.map { via in
                    (path: via.dropFirst("message.".count).split(separator: ".").map(String.init), canonical: canonicalOf[via] ?? [])
                }
                entries.append(
                    RESTEntry(
                        method: String(words[0]), segments: segments, field: words[2].split(separator: ".").map(String.init),
                        canonical: Self.strings(entry["canonical"]), extensionKeys: keys))
            }
        }
        return entries
    }

    static func strings(_ value: JSONValue?) -> [String] { value?.arrayValue?.compactMap(\.stringValue) ?? [] }

    /// Whether `value` holds something at `path`, looking into every element of an array on the way.
    static func has(_ value: JSONValue?, _ path: ArraySlice<String>) -> Bool {
        guard let value, value != .null else { return false }
        if let items = value.arrayValue { return items.contains { has($0, path) } }
        guard let key = path.first else { return true }
        return has(value[key], path.dropFirst())
    }

    /// The canonical fields a vendor REST request writes.
    static func touched(_ method: String, _ path: String, _ body: JSONValue?, _ entries: [RESTEntry]) -> Set<String> {
        var fields: Set<String> = []
        let parts = path.split(separator: "?", maxSplits: 1)[0].split(separator: "/")
        for entry in entries where entry.matches(method, path) && has(body, entry.field[...]) {
            if !entry.extensionKeys.isEmpty {
                for key in entry.extensionKeys where has(body, key.path[...]) { fields.formUnion(key.canonical) }
                continue
            }
            var canonical = Set(entry.canonical)
            // …/users/{u}/notification/user/{u} is the app level; any other key a conversation.
            if parts.count >= 5, parts[parts.count - 3] == "notification" {
                let appLevel = parts[parts.count - 2] == "user" && parts.last == parts[1]
                canonical = canonical.filter { !$0.hasPrefix(appLevel ? "user.conversation." : "user.app.") }
            }
            fields.formUnion(canonical)
        }
        return fields
    }

    @Test("the vendor-only fixtures touch every canonical field the REST mappings name, or the field is explained")
    func everyRESTFieldIsCovered() throws {
        let entries = try Self.entries()
        let named = Set(entries.flatMap { $0.canonical + $0.extensionKeys.flatMap(\.canonical) })
        #expect(named.count >= 30, "\(named.sorted())")
        var touched: Set<String> = []
        for file in Repository.fixtureFiles(under: "service") {
            let fixture = try ServiceFixture(path: file)
            guard fixture.isVendorOnly else { continue }
            for request in fixture.steps + [fixture.send] {
                if request.device != nil {
                    touched.formUnion(["user.device.token", "user.device.certificate"])
                } else {
                    touched.formUnion(Self.touched(request.method, request.path, request.body, entries))
                }
            }
        }
        let untouched = named.subtracting(touched)
        #expect(untouched.subtracting(Self.explained.keys).isEmpty, "no vendor-only service fixture touches \(untouched.subtracting(Self.explained.keys).sorted())")
        #expect(Set(Self.explained.keys).subtracting(untouched).isEmpty, "explained but touched: \(Set(Self.explained.keys).subtracting(untouched).sorted())")
    }

    @Test("at least 40 service fixtures, at least 85 % of them vendor-only, each native one saying why")
    func mostFixturesRunAgainstAnotherServer() throws {
        let fixtures = try Repository.fixtureFiles(under: "service").map { try ServiceFixture(path: $0) }
        let vendorOnly = fixtures.filter(\.isVendorOnly)
        #expect(fixtures.count >= 40)
        #expect(Double(vendorOnly.count) >= 0.85 * Double(fixtures.count), "\(vendorOnly.count) of \(fixtures.count) vendor-only")
        for fixture in fixtures where !fixture.isVendorOnly {
            let description = try JSONParser.parse(Array(Data(contentsOf: URL(fileURLWithPath: fixture.path))))["description"]?.stringValue ?? ""
            #expect(description.contains("Native"), "\(fixture.path): a native fixture says why in its description")
        }
    }

    @Test("the coverage rule sees what a request writes, and nothing it does not")
    func theRuleReadsRequests() throws {
        let entries = try Self.entries()
        func touched(_ method: String, _ path: String, _ body: String) throws -> Set<String> {
            Self.touched(method, path, try JSONParser.parse(Array(body.utf8)), entries)
        }
        #expect(
            try touched("POST", "/messages", #"{"target":["b"],"msg":{"type":"txt","msg":"x"},"ext":{"em_apns_ext":{"em_push_sound":"a.caf"}}}"#)
                .isSuperset(of: ["message.sound", "message.groupId", "message.content"]))
        #expect(try touched("POST", "/messages", #"{"target":["b"],"ext":{"em_apns_ext":{"em_push_sound":"a.caf"}}}"#).contains("message.badgeOverride") == false)
        #expect(try touched("PUT", "/users/u2/notification/user/u2", #"{"type":"AT"}"#) == ["user.app.remindType"])
        #expect(try touched("PUT", "/users/u2/notification/chatgroup/g1", #"{"type":"NONE"}"#) == ["user.conversation.remindType"])
        #expect(
            try touched("POST", "/v4/openim/sendmsg", #"{"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"x"}}],"OfflinePushInfo":{"ApnsInfo":{"Sound":"a"}}}"#)
                .isSuperset(of: ["message.sound", "message.content"]))
    }
}
