import Foundation
import PushBridgeTestSupport
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore
import Testing

/// The store reliability scenario: an app, calls that each leave a trace, and the state they lead
/// to (the store, facade and command-line tests share it).
package enum ReliabilityScenario {
    package static let now = "2026-03-02T09:15:00Z"

    package static let appJSON = #"{"certificates":[{"name":"agoraTest","bundleId":"io.agora.chatdemo","environment":"development"}]}"#

    /// `count` agora-silent calls that each leave a trace: conversation remind types over 97
    /// conversations, the language, the app remind type and the display name.
    package static func calls(_ count: Int, tag: String) -> [String] {
        let reminds = ["All", "MentionOnly", "None"]
        return (0..<count).map { i in
            switch i % 4 {
            case 0:
                return #"{"call":"setSilentModeForConversation","conversationId":"c\#(i % 97)","conversationType":"GroupChat","remindType":"\#(reminds[i % 3])"}"#
            case 1: return #"{"call":"setPreferredNotificationLanguage","languageCode":"\#(tag)\#(i)"}"#
            case 2: return #"{"call":"setSilentModeForAll","remindType":"\#(reminds[(i / 4) % 3])"}"#
            default: return #"{"call":"updatePushDisplayName","displayName":"\#(tag)-\#(i)"}"#
            }
        }
    }

    /// The state a user reaches after exactly these calls, computed in memory.
    package static func expectedState(after calls: ArraySlice<String>, user: UserID) async throws -> UserState? {
        let facade = PushFacade(store: MemoryStateStore())
        try await facade.configure(try Scenario.app(from: try JSONParser.parse(appJSON), at: .root))
        let now = Instant(iso8601: Self.now)!
        let parsed = try calls.enumerated().map { PushFacade.DialectCall(try JSONParser.parse($0.element), at: now, pointer: .root / $0.offset) }
        if !parsed.isEmpty { _ = try await facade.apply(parsed, dialect: "agora-silent", user: user) }
        return try await facade.user(user)?.state
    }

    package static func prepareDatabase() throws -> (db: String, folder: String) {
        let db = temporaryDatabase()
        let folder = (db as NSString).deletingLastPathComponent
        let app = folder + "/app.json"
        try appJSON.write(toFile: app, atomically: true, encoding: .utf8)
        let run = try runTool(["app", "--db", db, app])
        #expect(run.status == 0, "\(run.stderr)")
        return (db, folder)
    }
}
