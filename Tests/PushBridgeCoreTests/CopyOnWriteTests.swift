import Foundation
import PushBridgeCore
import PushBridgeJSON
import PushBridgeTestSupport
import Testing

/// `UserState`, `PushMessage` and `Certificate` keep their fields behind one shared reference: copies
/// must still behave as independent values, whichever field changes and however the change is made.
@Suite("Copy-on-write values")
struct CopyOnWriteTests {
    static let certificate = Certificate(name: "c", busiId: nil, bundleId: "io.example", environment: .production)

    static func someone() -> UserState {
        var state = UserState(user: "u1", displayStyle: .messageSummary, backgroundGraceSeconds: 120)
        state.bind(Device(token: "aa", certificate: certificate))
        state.displayName = "Ann"
        state.badge = 3
        return state
    }

    @Test("a changed copy of a user state leaves the original as it was, for every field and kind of change")
    func userStateCopies() {
        let changes: [(String, (inout UserState) -> Void)] = [
            ("user", { $0.user = "u2" }),
            ("devices, appended in place", { $0.devices.append(Device(token: "bb", certificate: Self.certificate)) }),
            ("devices, by bind", { $0.bind(Device(token: "cc", certificate: Self.certificate)) }),
            ("devices, by removal", { $0.removeDevice(token: "aa") }),
            ("a device's token in place", { $0.devices[0].token = "dd" }),
            ("bound certificate", { $0.boundCertificate = Self.certificate }),
            ("presence", { $0.setPresence(.online) }),
            ("grace", { $0.backgroundGraceSeconds = 0 }),
            ("badge, incremented in place", { $0.badge += 1 }),
            ("app remind type, nested", { $0.app.remindType = RemindType.none }),
            ("conversation settings", { $0.setSettings(ConversationPushSettings(remindType: .mentionOnly), for: ConversationKey(.group, "g")) }),
            ("display style", { $0.displayStyle = .simpleBanner }),
            ("display name", { $0.displayName = nil }),
            ("language", { $0.language = "de" }),
            ("sounds", { $0.oneToOneSound = "a.caf"; $0.groupSound = "b.caf" }),
            ("name cards", { $0.nameCards["g"] = "Ann (ops)" }),
            ("time zone", { $0.timeZone = TimeZone(identifier: "Asia/Shanghai")! }),
        ]
        for (name, change) in changes {
            let original = Self.someone()
            let snapshot = Self.someone()
            var copy = original
            #expect(copy == original)
            change(&copy)
            #expect(copy != original, "\(name): the copy did not change")
            #expect(original == snapshot, "\(name): changing the copy changed the original")
            #expect(original.devices.map(\.token) == ["aa"] && original.badge == 3 && original.user == "u1", "\(name)")
            // And the other way round: the original changed, the copy kept.
            var again = Self.someone()
            let kept = again
            change(&again)
            #expect(kept == snapshot, "\(name): changing the original changed its earlier copy")
        }
    }

    @Test("equal states hash alike whether or not they share storage")
    func hashing() {
        let a = Self.someone()
        var b = Self.someone()  // separate storage, same fields
        #expect(a == b && a.hashValue == b.hashValue)
        b.badge = 4
        b.badge = 3  // changed and changed back
        #expect(a == b && a.hashValue == b.hashValue)
        #expect(Set([a, b, a]).count == 1)
        b.language = "zh"
        #expect(a != b)
    }

    @Test("a state and a message print their fields, as plain structs do")
    func printing() {
        let text = String(describing: Self.someone())
        #expect(text.hasPrefix(#"UserState(user: "u1", devices: [PushBridgeCore.Device(token: "aa""#), "\(text)")
        #expect(text.contains(#"displayName: Optional("Ann")"#))
        let message = String(describing: PushMessage(id: "m1", sender: "u1", kind: .oneToOne, content: []))
        #expect(message.hasPrefix(#"PushMessage(id: "m1", sender: "u1", kind: "#), "\(message)")
    }

    @Test("a changed copy of a certificate leaves the original as it was, also inside a device and a state; equal ones hash alike and print their fields")
    func certificateCopies() {
        let changes: [(String, (inout Certificate) -> Void)] = [
            ("name", { $0.name = "d" }),
            ("name removed", { $0.name = nil; $0.busiId = "7" }),
            ("busiId", { $0.busiId = "12345" }),
            ("bundle id, appended in place", { $0.bundleId += ".voip" }),
            ("environment", { $0.environment = .development }),
        ]
        for (name, change) in changes {
            let original = Self.certificate
            var copy = original
            change(&copy)
            #expect(copy != original, "\(name): the copy did not change")
            #expect(original == Certificate(name: "c", busiId: nil, bundleId: "io.example", environment: .production), "\(name): the original changed")
            // Through a device and a state that share it.
            let state = Self.someone()
            var changed = state
            change(&changed.devices[0].certificate)
            #expect(state.devices[0].certificate == Self.certificate && changed.devices[0].certificate != Self.certificate, "\(name)")
        }
        var separate = Certificate(name: "c", busiId: nil, bundleId: "io", environment: .production)
        separate.bundleId += ".example"  // same fields, storage of its own
        #expect(separate == Self.certificate && separate.hashValue == Self.certificate.hashValue && Set([separate, Self.certificate]).count == 1)
        #expect(String(describing: Self.certificate) == #"Certificate(name: Optional("c"), busiId: nil, bundleId: "io.example", environment: PushBridgeCore.APNsEnvironment.production)"#)
        #expect(MemoryLayout<Device>.size <= 32, "a device holds its certificate by reference")
    }

    @Test("a changed copy of a message leaves the original as it was")
    func messageCopies() {
        let original = PushMessage(id: "m1", sender: "u1", kind: .group, groupId: "g", content: [.text("hi")])
        let changes: [(String, (inout PushMessage) -> Void)] = [
            ("content, appended in place", { $0.content.append(.image) }),
            ("translations", { $0.translations["de"] = "hallo" }),
            ("extension", { $0.extensionValue = .object(JSONObject([("k", .int(1))])) }),
            ("mentions", { $0.mentions = .users(["u2"]) }),
            ("flags", { $0.force = true; $0.ignoreBadge = true }),
            ("localization, nested", { $0.localization.bodyKey = "K" }),
            ("id", { $0.id = "m2" }),
        ]
        for (name, change) in changes {
            var copy = original
            change(&copy)
            #expect(copy != original, "\(name): the copy did not change")
            #expect(original == PushMessage(id: "m1", sender: "u1", kind: .group, groupId: "g", content: [.text("hi")]), "\(name): the original changed")
            #expect(original.derivedContent == "hi")
        }
    }
}
