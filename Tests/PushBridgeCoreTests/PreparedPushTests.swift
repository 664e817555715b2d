import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeTestSupport
import Testing

/// A prepared message writes, for every receiver, the bytes a full per-receiver render writes.
@Suite("Prepared push")
struct PreparedPushTests {
    /// Every dialect fixture's scenario, read once.
    static let scenarios: [ScenarioEngine.Prepared] = {
        let engine = ScenarioEngine()
        let files = (try? FixtureDiscovery.files(in: DialectRegistry.standard.ids.map { Repository.fixtures + "/" + $0 })) ?? []
        return files.compactMap { try? engine.prepare(Fixture(path: $0).scenario) }
    }()

    /// Receivers that differ from the scenario's own in everything a payload depends on.
    static func variants(of receiver: UserState, message: PushMessage) -> [UserState] {
        var out = [receiver]
        let ids = [receiver.user, "u\"q\\", "用户-🙂", String(repeating: "x", count: 300), ""]
        let badges = [0, 8, 9, 99, 123_456_789, -5]
        let languages: [String?] = [nil] + message.translations.keys.sorted() + ["zz"]
        let sounds: [String?] = [nil, "", "ding.caf", PayloadRenderer.noSound]
        var n = 0
        for id in ids {
            for badge in badges {
                var r = receiver
                r.user = id
                r.badge = badge
                r.displayStyle = n % 2 == 0 ? receiver.displayStyle : (receiver.displayStyle == .simpleBanner ? .messageSummary : .simpleBanner)
                r.language = languages[n % languages.count]
                r.groupSound = sounds[n % sounds.count]
                r.oneToOneSound = sounds[(n + 1) % sounds.count]
                out.append(r)
                n += 1
            }
        }
        return out
    }

    @Test func everyFixtureAndVariantMatchesAFullRender() throws {
        #expect(Self.scenarios.count > 200)
        var compared = 0
        var shared = 0
        for scenario in Self.scenarios {
            for profile in Profile.builtIn {
                let decider = PushDecider(app: scenario.world.app)
                var prepared = PreparedPush(scenario.message, sender: scenario.senderState, profile: profile, decider: decider)
                let receivers = Self.variants(of: scenario.receiverState, message: scenario.message)
                for receiver in receivers {
                    let full = decider.decide(scenario.message, sender: scenario.senderState, receiver: receiver, profile: profile, now: scenario.now)
                    let fast = prepared.decide(for: receiver, now: scenario.now)
                    #expect(fast == full, "\(scenario.message.id) profile \(profile.id) receiver \(receiver.user) badge \(receiver.badge)")
                    // A message prepared for one receiver writes its payload alone, keeping no class.
                    var single = PreparedPush(scenario.message, sender: scenario.senderState, profile: profile, decider: decider, receivers: 1)
                    let alone = single.decide(for: receiver, now: scenario.now)
                    #expect(alone == full, "one receiver: \(scenario.message.id) profile \(profile.id) receiver \(receiver.user) badge \(receiver.badge)")
                    #expect(single.templateCount == 0)
                    if fast != full || alone != full { return }
                    compared += 1
                }
                shared += receivers.count - prepared.templateCount
            }
        }
        #expect(compared > 10_000)
        #expect(shared > compared / 2)  // most receivers reuse a class's payload rather than writing their own
    }

    @Test func longBodiesAreShortenedPerReceiver() throws {
        var message = PushMessage(id: "m1", sender: "alice", kind: .oneToOne, content: [.text(String(repeating: "é", count: 3000))])
        message.badgeOverride = nil
        let certificate = Certificate(name: "c", busiId: nil, bundleId: "b", environment: .production)
        let decider = PushDecider(app: AppConfiguration(certificates: [certificate]))
        for profile in Profile.builtIn {
            var prepared = PreparedPush(message, sender: nil, profile: profile, decider: decider)
            for length in [1, 10, 2000, 4000] {
                var receiver = UserState(user: String(repeating: "b", count: length), displayStyle: .messageSummary, backgroundGraceSeconds: 0)
                receiver.devices = [Device(token: "ab", certificate: certificate)]
                let full = decider.decide(message, sender: nil, receiver: receiver, profile: profile, now: Instant(milliseconds: 0))
                #expect(prepared.decide(for: receiver, now: Instant(milliseconds: 0)) == full)
                if let payload = full.request?.payload { #expect(payload.count <= PayloadRenderer.maximumPayloadBytes) }
            }
        }
        // Bodies around the limit, some needing escapes, with and without a title: a body too long to
        // fit even alone is shortened at once by a full render (from the size around an empty body),
        // and from a full write's size and marks by a shared template; both must give the same bytes.
        for length in [4080, 4093, 4094, 4095, 4096, 4100, 5000] {
            for filler in ["a", "\"", "é", "\n"] {
                for title in [nil, "Title", String(repeating: "t", count: 5000)] {
                    var long = message
                    long.content = [.text(String(repeating: filler, count: length / filler.utf8.count))]
                    long.pushTitle = title
                    for profile in Profile.builtIn {
                        var prepared = PreparedPush(long, sender: nil, profile: profile, decider: decider)
                        var receiver = UserState(user: "bob", displayStyle: .messageSummary, backgroundGraceSeconds: 0)
                        receiver.devices = [Device(token: "ab", certificate: certificate)]
                        let full = decider.decide(long, sender: nil, receiver: receiver, profile: profile, now: Instant(milliseconds: 0))
                        #expect(prepared.decide(for: receiver, now: Instant(milliseconds: 0)) == full, "\(length) × \(filler.debugDescription) title \(title?.count ?? -1) \(profile.id)")
                    }
                }
            }
        }
    }

    /// A summary body is written from its pieces (the sender's name, the group's name, the content)
    /// without joining them first: what a payload holds must read back, with Foundation's parser, as
    /// the joined text, whatever the pieces hold.
    @Test func summaryBodiesWrittenInPiecesReadBackJoined() throws {
        let certificate = Certificate(name: "c", busiId: nil, bundleId: "b", environment: .production)
        let decider = PushDecider(app: AppConfiguration(certificates: [certificate]))
        let texts = ["", "a", "Zoë", "say \"hi\"", "back\\slash", "line\nbreak\ttab", "\u{01}\u{1F}", "明天 🙂", String(repeating: "long text ", count: 12)]
        var receiver = UserState(user: "r", displayStyle: .messageSummary, backgroundGraceSeconds: 0)
        receiver.devices = [Device(token: "ab", certificate: certificate)]
        var checked = 0
        for name in texts {
            for groupName in texts {
                for content in texts where !content.isEmpty {
                    for kind in [ChatKind.oneToOne, .group] {
                        var message = PushMessage(id: "m", sender: "s\"1", kind: kind, groupId: kind == .group ? "g" : nil, content: [.text(content)])
                        message.groupName = groupName
                        var sender = UserState(user: "s\"1", displayStyle: .messageSummary, backgroundGraceSeconds: 0)
                        sender.displayName = name
                        for profile in Profile.builtIn {
                            // The joined text, written out here as Specification §5 says, not by the renderer.
                            let shownName = name.isEmpty ? nil : name
                            let shownGroup = kind == .group && !groupName.isEmpty ? groupName : nil
                            let expected: String
                            switch (profile.bodyFormat, shownName, shownGroup) {
                            case (.nameColonContent, _, _): expected = (shownName ?? "s\"1") + ":" + content
                            case (.tencent, let n?, let g?): expected = n + " (" + g + "): " + content
                            case (.tencent, nil, let g?): expected = "(" + g + "): " + content
                            case (.tencent, let n?, nil): expected = n + ": " + content
                            case (.tencent, nil, nil): expected = content
                            }
                            for receivers in [1, 2] {
                                var prepared = PreparedPush(message, sender: sender, profile: profile, decider: decider, receivers: receivers)
                                let payload = try #require(prepared.decide(for: receiver, now: Instant(milliseconds: 0)).request?.payload)
                                let object = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
                                let alert = (object["aps"] as? [String: Any])?["alert"]
                                let body = (alert as? String) ?? (alert as? [String: Any])?["body"] as? String
                                #expect(body == expected, "profile \(profile.id) name \(name.debugDescription) group \(groupName.debugDescription) content \(content.debugDescription)")
                                checked += 1
                            }
                            #expect(decider.renderer.summary(message, sender: sender, receiver: receiver, profile: profile) == expected)
                        }
                    }
                }
            }
        }
        #expect(checked == 9 * 9 * 8 * 2 * 3 * 2)
    }

    /// A receiver's payload made from a template (the template's bytes around its own badge digits
    /// and id, as one array of its exact size) is what the writer writes, whatever the lengths of the
    /// digits and the id against those the template was written with, and an id that needs escapes.
    @Test func templatePayloadsMatchTheWriter() throws {
        var w = JSONWriter()
        w.raw("{\"aps\":{\"alert\":\"hi\",\"badge\":")
        let badgeStart = w.count
        w.integer(42)
        let badge = badgeStart..<w.count
        w.raw("},\"f\":\"a\",\"t\":")
        let receiverStart = w.count
        w.string("user-77")
        let receiver = receiverStart..<w.count
        w.raw("}")
        let shapes: [(badge: Range<Int>?, receiver: Range<Int>?)] = [(badge, receiver), (badge, nil), (nil, receiver)]
        let ids = ["user-77", "user-7", "user-7777777", "", "用户-🙂", "u\"q\\", "tab\there"]
        for shape in shapes {
            let template = try #require(PayloadTemplate.checked(bytes: w.bytes, badge: shape.badge, receiver: shape.receiver))
            for value in [42, 0, 7, 99, 100, 123_456_789, -5, Int.max, Int.min] {
                for id in ids {
                    var expected = JSONWriter()
                    template.write(badge: value, receiver: id, into: &expected)
                    let made = template.payload(badge: value, receiver: id)
                    #expect(made == expected.bytes, "badge \(value) id \(id.debugDescription)")
                    #expect(made.count == template.size(badge: value, receiver: id))
                }
            }
        }
    }

    @Test func writerEscapesAndIntegersMatchFoundation() throws {
        // The eight-byte scan must find an escape at every offset, and integers of every length.
        for offset in 0..<20 {
            for special in ["\"", "\\", "\n", "\u{01}", "\u{1F}"] {
                let text = String(repeating: "a", count: offset) + special + String(repeating: "é", count: offset % 5) + "z"
                var w = JSONWriter()
                w.string(text)
                let decoded = try JSONSerialization.jsonObject(with: Data(w.bytes), options: [.fragmentsAllowed]) as? String
                #expect(decoded == text)
            }
        }
        for value in [0, 7, 10, 99, 100, -1, -10, 123_456_789, Int.max, Int.min] {
            var w = JSONWriter()
            w.integer(value)
            #expect(w.string == String(value))
            #expect(JSONWriter.decimalLength(of: value) == String(value).utf8.count)
        }
    }
}
