import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeTestSupport
import Testing

/// Specification §8: bad input is rejected with the JSON pointer and what was expected; nothing crashes.
@Suite("Bad input")
struct BadInputTests {
    static let base = "Fixtures/easemob-legacy/001-one-to-one-simple-banner.json"

    struct Case: CustomTestStringConvertible, Sendable {
        let label: String
        let pointer: String
        let value: JSONValue?
        let errorPointer: String
        let code: InputError.Code
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        // Specification §10: the single headers/device keys of an expectation are gone; deliveries is checked for shape.
        Case(label: "expect.headers (before Specification §10)", pointer: "/expect/headers", value: ["apns-topic": "x"],
            errorPointer: "/expect/headers", code: .unknownKey),
        Case(label: "expect.device (before Specification §10)", pointer: "/expect/device", value: ["token": "ab"],
            errorPointer: "/expect/device", code: .unknownKey),
        Case(label: "deliveries not an array", pointer: "/expect/deliveries", value: "all",
            errorPointer: "/expect/deliveries", code: .wrongType),
        Case(label: "a delivery without headers", pointer: "/expect/deliveries/0/headers", value: nil,
            errorPointer: "/expect/deliveries/0/headers", code: .missingKey),
        Case(label: "em_push_sound a number (null is accepted)", pointer: "/message/ext", value: ["em_apns_ext": ["em_push_sound": 5]],
            errorPointer: "/message/ext/em_apns_ext/em_push_sound", code: .wrongType),
        Case(label: "hour 25", pointer: "/receiver/calls/2", value: ["call": "disableOfflinePushStart", "start": 25, "end": 8],
            errorPointer: "/receiver/calls/2/start", code: .outOfRange),
        Case(label: "end 0", pointer: "/receiver/calls/2", value: ["call": "disableOfflinePushStart", "start": 22, "end": 0],
            errorPointer: "/receiver/calls/2/end", code: .outOfRange),
        Case(label: "end 25", pointer: "/receiver/calls/2", value: ["call": "disableOfflinePushStart", "start": 22, "end": 25],
            errorPointer: "/receiver/calls/2/end", code: .outOfRange),
        Case(label: "negative start", pointer: "/receiver/calls/2", value: ["call": "disableOfflinePushStart", "start": -1, "end": 8],
            errorPointer: "/receiver/calls/2/start", code: .outOfRange),
        Case(label: "hour as a string", pointer: "/receiver/calls/2", value: ["call": "disableOfflinePushStart", "start": "7", "end": 8],
            errorPointer: "/receiver/calls/2/start", code: .wrongType),
        Case(label: "hour as a double", pointer: "/receiver/calls/2", value: ["call": "disableOfflinePushStart", "start": 7.0, "end": 8],
            errorPointer: "/receiver/calls/2/start", code: .wrongType),
        Case(label: "missing end", pointer: "/receiver/calls/2", value: ["call": "disableOfflinePushStart", "start": 7],
            errorPointer: "/receiver/calls/2/end", code: .missingKey),
        Case(label: "another dialect's call", pointer: "/receiver/calls/2", value: ["call": "setSilentModeForAll", "remindType": "None"],
            errorPointer: "/receiver/calls/2/call", code: .unknownCall),
        Case(label: "unknown call", pointer: "/sender/calls", value: [["call": "disableOfflinePush"]],
            errorPointer: "/sender/calls/0/call", code: .unknownCall),
        Case(label: "unknown key in a call", pointer: "/receiver/calls/2", value: ["call": "enableOfflinePush", "start": 1],
            errorPointer: "/receiver/calls/2/start", code: .unknownKey),
        Case(label: "call without a name", pointer: "/receiver/calls/2", value: ["start": 1],
            errorPointer: "/receiver/calls/2/call", code: .missingKey),
        Case(label: "non-hex token", pointer: "/receiver/calls/1/deviceToken", value: "xyz123",
            errorPointer: "/receiver/calls/1/deviceToken", code: .invalidValue),
        Case(label: "odd-length token", pointer: "/receiver/calls/1/deviceToken", value: "abc",
            errorPointer: "/receiver/calls/1/deviceToken", code: .invalidValue),
        Case(label: "unknown certificate", pointer: "/receiver/calls/0/apnsCertName", value: "nope",
            errorPointer: "/receiver/calls/0/apnsCertName", code: .unknownReference),
        Case(label: "token before initializeSDK", pointer: "/receiver/calls/0", value: nil,
            errorPointer: "/receiver/calls/0/call", code: .invalidValue),
        Case(label: "unknown display style", pointer: "/receiver/calls/2", value: ["call": "updatePushDisplayStyle", "style": "Banner"],
            errorPointer: "/receiver/calls/2/style", code: .invalidValue),
        Case(label: "display name over 100 characters", pointer: "/sender/calls",
            value: [["call": "updatePushDisplayName", "displayName": .string(String(repeating: "n", count: 101))]],
            errorPointer: "/sender/calls/0/displayName", code: .outOfRange),
        Case(label: "empty group list", pointer: "/receiver/calls/2", value: ["call": "updatePushServiceForGroups", "groupIds": [], "disablePush": true],
            errorPointer: "/receiver/calls/2/groupIds", code: .invalidValue),
        Case(label: "disablePush as a number", pointer: "/receiver/calls/2",
            value: ["call": "updatePushServiceForGroups", "groupIds": ["g"], "disablePush": 1],
            errorPointer: "/receiver/calls/2/disablePush", code: .wrongType),
        Case(label: "unknown dialect", pointer: "/dialect", value: "whatsapp", errorPointer: "/dialect", code: .unknownReference),
        Case(label: "unknown profile", pointer: "/profile", value: "whatsapp", errorPointer: "/profile", code: .unknownReference),
        Case(label: "unknown scenario key", pointer: "/expected", value: [:], errorPointer: "/expected", code: .unknownKey),
        Case(label: "invalid now", pointer: "/now", value: "2026-03-02 09:15", errorPointer: "/now", code: .invalidValue),
        Case(label: "invalid call time", pointer: "/receiver/calls/1/at", value: "yesterday",
            errorPointer: "/receiver/calls/1/at", code: .invalidValue),
        Case(label: "background without backgroundSince", pointer: "/receiver/presence", value: "background",
            errorPointer: "/receiver/backgroundSince", code: .missingKey),
        Case(label: "unknown presence", pointer: "/receiver/presence", value: "away", errorPointer: "/receiver/presence", code: .invalidValue),
        Case(label: "unknown time zone", pointer: "/receiver/timezone", value: "Mars/Olympus", errorPointer: "/receiver/timezone",
            code: .unknownReference),
        Case(label: "negative badge", pointer: "/receiver/badge", value: -1, errorPointer: "/receiver/badge", code: .outOfRange),
        Case(label: "unknown target type", pointer: "/message/target_type", value: "rooms", errorPointer: "/message/target_type",
            code: .invalidValue),
        Case(label: "receiver not in target", pointer: "/message/target", value: ["7007"], errorPointer: "/message/target", code: .invalidValue),
        Case(label: "from is not the sender", pointer: "/message/from", value: "7007", errorPointer: "/message/from", code: .invalidValue),
        Case(label: "unsupported message type", pointer: "/message/msg/type", value: "gif", errorPointer: "/message/msg/type", code: .invalidValue),
        Case(label: "missing message id", pointer: "/message/id", value: nil, errorPointer: "/message/id", code: .missingKey),
        Case(label: "misspelt em_ key", pointer: "/message/ext", value: ["em_push_contnet": "x"], errorPointer: "/message/ext/em_push_contnet",
            code: .unknownKey),
        Case(label: "template in the legacy dialect", pointer: "/message/ext", value: ["em_push_template": ["name": "t"]],
            errorPointer: "/message/ext/em_push_template", code: .unknownKey),
        Case(label: "unknown em_apns_ext key", pointer: "/message/ext", value: ["em_apns_ext": ["em_push_colour": "red"]],
            errorPointer: "/message/ext/em_apns_ext/em_push_colour", code: .unknownKey),
        Case(label: "mutable content as a string", pointer: "/message/ext", value: ["em_apns_ext": ["em_push_mutable_content": "true"]],
            errorPointer: "/message/ext/em_apns_ext/em_push_mutable_content", code: .wrongType),
        Case(label: "loc args not strings", pointer: "/message/ext", value: ["em_apns_ext": ["em_push_body_loc_key": "K", "em_push_body_loc_args": [1]]],
            errorPointer: "/message/ext/em_apns_ext/em_push_body_loc_args/0", code: .wrongType),
        Case(label: "silent flag as a string", pointer: "/message/ext", value: ["em_ignore_notification": "YES"],
            errorPointer: "/message/ext/em_ignore_notification", code: .wrongType),
        Case(label: "unknown reason in expect", pointer: "/expect", value: ["push": false, "reason": "dnd"], errorPointer: "/expect/reason",
            code: .invalidValue),
        Case(label: "certificate without bundle id", pointer: "/app/certificates/0/bundleId", value: nil,
            errorPointer: "/app/certificates/0/bundleId", code: .missingKey),
        Case(label: "unknown environment", pointer: "/app/certificates/0/environment", value: "sandbox",
            errorPointer: "/app/certificates/0/environment", code: .invalidValue),
    ]

    @Test("rejected with pointer and code", arguments: cases)
    func rejected(_ c: Case) throws {
        try expectRejection(c, base: Self.base)
    }

    /// A rejected call changes nothing, even applied straight to the adapter (no copy by the engine).
    @Test("a rejected call changes no state", arguments: [
        ["call": "disableOfflinePushStart", "start": 22, "end": 0],
        ["call": "updatePushServiceForGroups", "groupIds": ["g1", ""], "disablePush": true],
        ["call": "updatePushServiceForGroups", "groupIds": ["g1"], "disablePush": "yes"],
        ["call": "bindDeviceToken", "deviceToken": "zz"],
        ["call": "updatePushDisplayStyle", "style": "Loud"],
        ["call": "initializeSDK", "appkey": "a#b", "apnsCertName": "missing"],
        ["call": "updatePushDisplayName", "displayName": 7],
    ] as [JSONValue])
    func rejectedCallChangesNothing(_ call: JSONValue) throws {
        let certificate = Certificate(name: "apnsTest", busiId: nil, bundleId: "com.example", environment: .development)
        try expectRejectedWithoutChange(call, adapter: EasemobLegacyAdapter(), app: AppConfiguration(certificates: [certificate]), setup: [
            ["call": "initializeSDK", "appkey": "a#b", "apnsCertName": "apnsTest"], ["call": "disableOfflinePushStart", "start": 7, "end": 17],
        ])
    }
}

/// Specification §8 for the tencent-tim dialect.
@Suite("Bad input: tencent-tim")
struct TencentBadInputTests {
    static let base = "Fixtures/tencent-tim/002-c2c-with-nick.json"

    static let cases: [BadInputTests.Case] = [
        .init(label: "openPush 3", pointer: "/receiver/calls/2", value: ["call": "setAPNS", "openPush": 3],
            errorPointer: "/receiver/calls/2/openPush", code: .outOfRange),
        .init(label: "busiId not in app.certificates", pointer: "/receiver/calls/0/busiId", value: 9999,
            errorPointer: "/receiver/calls/0/busiId", code: .unknownReference),
        .init(label: "busiId as a word", pointer: "/receiver/calls/0/busiId", value: "debug",
            errorPointer: "/receiver/calls/0/busiId", code: .wrongType),
        .init(label: "non-hex token", pointer: "/receiver/calls/0/token", value: "0xZZ",
            errorPointer: "/receiver/calls/0/token", code: .invalidValue),
        .init(label: "unknown element type", pointer: "/message/elems/0", value: ["type": "Movie"],
            errorPointer: "/message/elems/0/type", code: .invalidValue),
        .init(label: "unknown element key", pointer: "/message/elems/0", value: ["type": "Text", "text": "a", "url": "b"],
            errorPointer: "/message/elems/0/url", code: .unknownKey),
        .init(label: "no elements", pointer: "/message/elems", value: [], errorPointer: "/message/elems", code: .invalidValue),
        .init(label: "pushFlag 2", pointer: "/message/offlinePushInfo", value: ["pushFlag": 2],
            errorPointer: "/message/offlinePushInfo/pushFlag", code: .outOfRange),
        .init(label: "ignoreBadge as a number", pointer: "/message/offlinePushInfo", value: ["iosConfig": ["ignoreBadge": 1]],
            errorPointer: "/message/offlinePushInfo/iosConfig/ignoreBadge", code: .wrongType),
        .init(label: "unknown conversation type", pointer: "/message/conversation/type", value: "Room",
            errorPointer: "/message/conversation/type", code: .invalidValue),
        .init(label: "C2C to someone else", pointer: "/message/conversation/id", value: "carol",
            errorPointer: "/message/conversation/id", code: .invalidValue),
        .init(label: "negative unread", pointer: "/receiver/calls/1", value: ["call": "doBackground", "c2cUnread": -1],
            errorPointer: "/receiver/calls/1/c2cUnread", code: .outOfRange),
        .init(label: "an easemob call in tencent-tim", pointer: "/receiver/calls/1", value: ["call": "bindDeviceToken", "deviceToken": "ab"],
            errorPointer: "/receiver/calls/1/call", code: .unknownCall),
        .init(label: "sound as a number", pointer: "/receiver/calls/1", value: ["call": "setAPNS", "openPush": 1, "c2cSound": 5],
            errorPointer: "/receiver/calls/1/c2cSound", code: .wrongType),
        .init(label: "androidConfig not an object", pointer: "/message/offlinePushInfo", value: ["androidConfig": "oppo"],
            errorPointer: "/message/offlinePushInfo/androidConfig", code: .wrongType),
    ]

    @Test("rejected with pointer and code", arguments: cases)
    func rejected(_ c: BadInputTests.Case) throws {
        try expectRejection(c, base: Self.base)
    }

    @Test("a rejected call changes no state", arguments: [
        ["call": "setAPNS", "openPush": 3, "c2cSound": "a.caf"],
        ["call": "setAPNS", "openPush": 2, "c2cSound": "a.caf", "groupSound": 7],
        ["call": "setToken", "busiId": 1, "token": "abcd"],
        ["call": "setToken", "busiId": 2383, "token": "xyz"],
        ["call": "doBackground", "c2cUnread": 1, "groupUnread": "2"],
        ["call": "modifyGroupMemberInfoSetNameCard", "groupId": "g", "user": "", "nameCard": "x"],
    ] as [JSONValue])
    func rejectedCallChangesNothing(_ call: JSONValue) throws {
        let certificate = Certificate(name: nil, busiId: "2383", bundleId: "com.example", environment: .development)
        try expectRejectedWithoutChange(call, adapter: TencentTIMAdapter(), app: AppConfiguration(certificates: [certificate]), setup: [
            ["call": "setAPNS", "openPush": 1, "c2cSound": "c.caf"], ["call": "doBackground", "c2cUnread": 3],
        ])
    }

    @Test func commandLineRejectsOpenPush3() throws {
        let document = try fixtureDocument(Self.base).setting("/receiver/calls/2", to: ["call": "setAPNS", "openPush": 3])
        let file = try temporaryFile(document.compactText)
        let run = try runTool(["decide", file])
        #expect(run.status == 2)
        #expect(run.stderr.contains("\(file): at /receiver/calls/2/openPush: expected openPush 0 (unchanged), 1 (on) or 2 (off), found 3"))
    }
}

/// Specification §8 for the agora-silent dialect.
@Suite("Bad input: agora-silent")
struct AgoraBadInputTests {
    static let base = "Fixtures/agora-silent/001-default-all.json"

    static let cases: [BadInputTests.Case] = [
        .init(label: "duration 10081", pointer: "/receiver/calls/2", value: ["call": "setSilentModeForAll", "silentModeDuration": 10081],
            errorPointer: "/receiver/calls/2/silentModeDuration", code: .outOfRange),
        .init(label: "25:00", pointer: "/receiver/calls/2",
            value: ["call": "setSilentModeForAll", "silentModeStartTime": "25:00", "silentModeEndTime": "8:00"],
            errorPointer: "/receiver/calls/2/silentModeStartTime", code: .outOfRange),
        .init(label: "24:00 as a start (only an end may be 24:00)", pointer: "/receiver/calls/2",
            value: ["call": "setSilentModeForAll", "silentModeStartTime": "24:00", "silentModeEndTime": "8:00"],
            errorPointer: "/receiver/calls/2/silentModeStartTime", code: .outOfRange),
        .init(label: "24:30 as an end", pointer: "/receiver/calls/2",
            value: ["call": "setSilentModeForAll", "silentModeStartTime": "8:00", "silentModeEndTime": "24:30"],
            errorPointer: "/receiver/calls/2/silentModeEndTime", code: .outOfRange),
        .init(label: "translation losses that are not an array", pointer: "/losses", value: "none", errorPointer: "/losses", code: .wrongType),
        .init(label: "translatedFrom that is not a string", pointer: "/translatedFrom", value: 1, errorPointer: "/translatedFrom", code: .wrongType),
        .init(label: "a query's dialect that is not a string", pointer: "/expect",
            value: ["push": true, "queries": [["call": "getAPNSConfig", "dialect": 5, "result": [:]]]],
            errorPointer: "/expect/queries/0/dialect", code: .wrongType),
        .init(label: "8:60", pointer: "/receiver/calls/2",
            value: ["call": "setSilentModeForAll", "silentModeStartTime": "8:00", "silentModeEndTime": "8:60"],
            errorPointer: "/receiver/calls/2/silentModeEndTime", code: .outOfRange),
        .init(label: "8h30", pointer: "/receiver/calls/2",
            value: ["call": "setSilentModeForAll", "silentModeStartTime": "8h30", "silentModeEndTime": "9:00"],
            errorPointer: "/receiver/calls/2/silentModeStartTime", code: .invalidValue),
        .init(label: "start without end", pointer: "/receiver/calls/2", value: ["call": "setSilentModeForAll", "silentModeStartTime": "8:00"],
            errorPointer: "/receiver/calls/2/silentModeEndTime", code: .missingKey),
        .init(label: "interval on a conversation", pointer: "/receiver/calls/2",
            value: ["call": "setSilentModeForConversation", "conversationId": "u1", "conversationType": "Chat",
                "silentModeStartTime": "8:00", "silentModeEndTime": "9:00"],
            errorPointer: "/receiver/calls/2/silentModeStartTime", code: .invalidValue),
        .init(label: "unknown remind type", pointer: "/receiver/calls/2", value: ["call": "setSilentModeForAll", "remindType": "AT"],
            errorPointer: "/receiver/calls/2/remindType", code: .invalidValue),
        .init(label: "empty setSilentModeForAll", pointer: "/receiver/calls/2", value: ["call": "setSilentModeForAll"],
            errorPointer: "/receiver/calls/2", code: .missingKey),
        .init(label: "unknown conversation type", pointer: "/receiver/calls/2",
            value: ["call": "setSilentModeForConversation", "conversationId": "u1", "conversationType": "Room", "remindType": "None"],
            errorPointer: "/receiver/calls/2/conversationType", code: .invalidValue),
        .init(label: "a legacy call in agora-silent", pointer: "/receiver/calls/2", value: ["call": "disableOfflinePushStart", "start": 1, "end": 2],
            errorPointer: "/receiver/calls/2/call", code: .unknownCall),
        .init(label: "em_at_list as a number", pointer: "/message/ext", value: ["em_at_list": 1],
            errorPointer: "/message/ext/em_at_list", code: .wrongType),
        .init(label: "template without a name", pointer: "/message/ext", value: ["em_push_template": ["title_args": ["a"]]],
            errorPointer: "/message/ext/em_push_template/name", code: .missingKey),
        .init(label: "a translation that is not text", pointer: "/message/translations", value: ["EU": 1],
            errorPointer: "/message/translations/EU", code: .wrongType),
        .init(label: "unknown body type", pointer: "/message/body/type", value: "sticker", errorPointer: "/message/body/type", code: .invalidValue),
        .init(label: "to someone else", pointer: "/message/to", value: "u9", errorPointer: "/message/to", code: .invalidValue),
    ]

    @Test("rejected with pointer and code", arguments: cases)
    func rejected(_ c: BadInputTests.Case) throws {
        try expectRejection(c, base: Self.base)
    }

    @Test func twentyOneConversationsAreRejectedAndTwentyAccepted() throws {
        func query(_ count: Int) -> JSONValue {
            let list = (0..<count).map { i -> JSONValue in ["conversationId": .string("g\(i)"), "conversationType": "GroupChat"] }
            return ["call": "getSilentModeForConversations", "conversations": .array(list), "result": [:]]
        }
        let prepared = try ScenarioEngine().prepare(try Fixture(path: "q.json", document: try fixtureDocument(Self.base)).scenario)
        #expect(try ScenarioEngine().query(query(20), at: .root, in: prepared) == .object(JSONObject()))
        do {
            _ = try ScenarioEngine().query(query(21), at: JSONPointer.root / "expect" / "queries" / 0, in: prepared)
            Issue.record("21 conversations must be rejected")
        } catch let error as InputError {
            #expect(error.pointer.description == "/expect/queries/0/conversations")
            #expect(error.code == .outOfRange)
        }
    }

    @Test("a rejected call changes no state", arguments: [
        ["call": "setSilentModeForAll", "remindType": "None", "silentModeDuration": 10081],
        ["call": "setSilentModeForAll", "remindType": "None", "silentModeStartTime": "25:00", "silentModeEndTime": "1:00"],
        ["call": "setSilentModeForAll", "remindType": "None", "silentModeStartTime": "24:00", "silentModeEndTime": "1:00"],
        ["call": "setSilentModeForAll", "silentModeDuration": 30, "remindType": "Loud"],
        ["call": "setSilentModeForConversation", "conversationId": "u1", "conversationType": "Chat", "remindType": "None",
            "silentModeStartTime": "1:00", "silentModeEndTime": "2:00"],
        ["call": "setSilentModeForConversation", "conversationId": "u1", "conversationType": "Chat", "remindType": "None", "silentModeDuration": -1],
        ["call": "clearRemindTypeForConversation", "conversationId": "", "conversationType": "Chat"],
        ["call": "setPreferredNotificationLanguage", "languageCode": 5],
    ] as [JSONValue])
    func rejectedCallChangesNothing(_ call: JSONValue) throws {
        try expectRejectedWithoutChange(call, adapter: AgoraSilentAdapter(), app: AppConfiguration(), setup: [
            ["call": "setSilentModeForAll", "remindType": "MentionOnly", "silentModeDuration": 60],
            ["call": "setSilentModeForConversation", "conversationId": "u1", "conversationType": "Chat", "remindType": "All"],
        ])
    }

    @Test func commandLineRejectsDuration10081() throws {
        let document = try fixtureDocument(Self.base).setting("/receiver/calls/2", to: ["call": "setSilentModeForAll", "silentModeDuration": 10081])
        let file = try temporaryFile(document.compactText)
        let run = try runTool(["decide", file])
        #expect(run.status == 2)
        #expect(run.stderr.contains("\(file): at /receiver/calls/2/silentModeDuration: expected a duration in minutes 0–10080"))
    }
}

/// Decides the `base` fixture with one value replaced and checks the rejection: pointer, code, and
/// a one-line message saying what was expected. The scenario's own `profile` is resolved by the engine.
func expectRejection(_ c: BadInputTests.Case, base: String) throws {
    let document = try fixtureDocument(base).setting(c.pointer, to: c.value)
    do {
        _ = try ScenarioEngine().decide(try Fixture(path: "case.json", document: document).scenario)
        Issue.record("\(c.label): expected an error at \(c.errorPointer)")
    } catch let error as InputError {
        #expect(error.pointer.description == c.errorPointer, "\(c.label): \(error)")
        #expect(error.code == c.code, "\(c.label): \(error)")
        #expect(error.description.contains("expected"), "\(c.label)")
        #expect(!error.description.contains("\n"), "\(c.label)")
    }
}

/// Applies `setup` straight to the adapter (no copy by the engine), then checks that `call` is
/// rejected and leaves the world exactly as it was.
func expectRejectedWithoutChange(_ call: JSONValue, adapter: any DialectAdapter, app: AppConfiguration, setup: [JSONValue]) throws {
    var world = PushWorld(app: app)
    let context = CallContext(caller: "receiver", at: Instant(milliseconds: 1_000_000))
    for step in setup { try adapter.apply(step, at: .root, to: &world, context: context) }
    let before = world
    #expect(throws: InputError.self) { try adapter.apply(call, at: .root, to: &world, context: context) }
    #expect(world == before)
}

/// The command line: exit 2 and one line naming file, pointer and expectation.
@Suite("Command line")
struct CommandLineTests {
    static func scenario(replacing pointer: String, with value: JSONValue?) throws -> String {
        let document = try fixtureDocument(BadInputTests.base).setting(pointer, to: value)
        return try temporaryFile(document.compactText)
    }

    func expectRejected(_ run: ToolRun, file: String, pointer: String) {
        #expect(run.status == 2)
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(run.stderr)")
        #expect(run.stderr.contains(file))
        #expect(run.stderr.contains("at \(pointer):"), "\(run.stderr)")
        #expect(run.stderr.contains("expected"))
        #expect(run.stdout.isEmpty)
    }

    @Test func malformedJSON() throws {
        let file = try temporaryFile("{\"name\": \"x\",\n \"dialect\": \"easemob-legacy\",}")
        let run = try runTool(["decide", file])
        expectRejected(run, file: file, pointer: "/")
        #expect(run.stderr.contains("line 2"))
    }

    @Test func aQueryInAnUnknownDialect() throws {
        let file = try Self.scenario(replacing: "/expect/queries", with: [["call": "getSilentModeForAll", "dialect": "line-classic", "result": [:]]])
        let run = try runTool(["conform", file])
        #expect(run.status == 2)
        #expect(run.stdout.contains("at /expect/queries/0/dialect: expected a dialect: one of easemob-legacy, agora-silent, tencent-tim, found \"line-classic\""))
    }

    @Test func hour25() throws {
        let file = try Self.scenario(replacing: "/receiver/calls/2", with: ["call": "disableOfflinePushStart", "start": 25, "end": 8])
        expectRejected(try runTool(["decide", file]), file: file, pointer: "/receiver/calls/2/start")
    }

    @Test func end0() throws {
        let file = try Self.scenario(replacing: "/receiver/calls/2", with: ["call": "disableOfflinePushStart", "start": 22, "end": 0])
        expectRejected(try runTool(["decide", file]), file: file, pointer: "/receiver/calls/2/end")
    }

    @Test func nonHexToken() throws {
        let file = try Self.scenario(replacing: "/receiver/calls/1/deviceToken", with: "not-hex")
        expectRejected(try runTool(["decide", file]), file: file, pointer: "/receiver/calls/1/deviceToken")
    }

    @Test func unknownCall() throws {
        let file = try Self.scenario(replacing: "/receiver/calls/2", with: ["call": "muteEverything"])
        expectRejected(try runTool(["decide", file]), file: file, pointer: "/receiver/calls/2/call")
    }

    @Test func unknownKey() throws {
        let file = try Self.scenario(replacing: "/receiver/calls/2", with: ["call": "enableOfflinePush", "now": true])
        expectRejected(try runTool(["decide", file]), file: file, pointer: "/receiver/calls/2/now")
    }

    @Test func wrongType() throws {
        let file = try Self.scenario(replacing: "/message/target", with: "6006")
        expectRejected(try runTool(["decide", file]), file: file, pointer: "/message/target")
    }

    /// The option is blamed, not the file: `--profile` came from the command line.
    @Test func unknownProfileOption() throws {
        let file = Repository.root.appendingPathComponent(BadInputTests.base).path
        let run = try runTool(["decide", file, "--profile", "whatsapp"])
        #expect(run.status == 2 && run.stdout.isEmpty)
        #expect(run.stderr == #"pushbridge: --profile: expected a profile: one of easemob-legacy, agora-silent, tencent-tim, found "whatsapp" [unknown-reference]"# + "\n", "\(run.stderr)")
    }

    @Test func missingFile() throws {
        let run = try runTool(["decide", "/nonexistent/scenario.json"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("/nonexistent/scenario.json"))
    }

    @Test func decidePrintsTheDecision() throws {
        let run = try runTool(["decide", BadInputTests.base])
        #expect(run.status == 0)
        #expect(run.stdout == ScenarioDecisionText.simpleBanner + "\n")
    }

    @Test func decideWithAnotherProfile() throws {
        let run = try runTool(["decide", BadInputTests.base, "--profile", "tencent-tim"])
        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("{\"push\":true,\"payload\":{\"aps\":{\"alert\":\"You have a new message\",\"badge\":1,\"sound\":\"default\"}},"))
    }

    @Test func conformPassesTheLegacyFixtures() throws {
        let run = try runTool(["conform", "Fixtures/easemob-legacy"])
        #expect(run.status == 0)
        let last = run.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last == "\(Repository.fixtureFiles(under: "easemob-legacy").count) passed, 0 failed")
    }

    @Test func conformFailsWithATypedDiff() throws {
        let document = try fixtureDocument("Fixtures/easemob-legacy/014-mutable-content.json")
            .setting("/expect/payload/aps/mutable-content", to: .bool(true))
        let file = try temporaryFile(document.compactText)
        let run = try runTool(["conform", file])
        #expect(run.status == 1)
        #expect(run.stdout.contains("/payload/aps/mutable-content: expected true (boolean), got 1 (integer)"))
        #expect(run.stdout.hasSuffix("0 passed, 1 failed\n"))
    }

    @Test func conformWithABadFixtureExitsTwo() throws {
        let file = try temporaryFile("{\"name\":\"x\"")
        let run = try runTool(["conform", file])
        #expect(run.status == 2)
        #expect(run.stdout.contains("FAIL"))
        #expect(run.stdout.contains(file))
    }
}

extension ScenarioDecisionText {
    static let simpleBanner = """
        {"push":true,"payload":{"aps":{"alert":{"body":"you got a new message"},"badge":1,"sound":"default"},\
        "f":"6001","m":"373360335316321408","t":"6006"},"deliveries":[{"device":{"token":\
        "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90","environment":"development"},"headers":\
        {"apns-push-type":"alert","apns-priority":"10","apns-topic":"com.easemob.chatdemoui"}}]}
        """
}
