import Foundation
import PushBridgeTestSupport
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgePostgres
import PushBridgeStore
import Testing

/// The facade tests' app, users and messages, and the stores they run on (the store, facade and
/// service tests share them).
package enum FacadeScenario {
    package enum Backing: String, CaseIterable, CustomStringConvertible {
        case sqliteFile, memory, postgres
        package var description: String { rawValue }

        /// SQLite and the memory twin always; PostgreSQL when the test cluster runs (`make test`).
        package static var allCases: [Backing] { testPostgresURL() == nil ? [.sqliteFile, .memory] : [.sqliteFile, .memory, .postgres] }

        package func store() async throws -> any PushStateStore {
            switch self {
            case .sqliteFile: return try SQLiteStateStore(path: temporaryDatabase())
            case .memory: return MemoryStateStore()
            case .postgres: return try await PostgresStateStore.open(location: try freshPostgresSchema(try #require(testPostgresURL())))
            }
        }
    }

    package static let now = Instant(iso8601: "2026-03-02T09:15:00Z")!
    package static let app = AppConfiguration(certificates: [
        Certificate(name: "agoraTest", busiId: nil, bundleId: "io.agora.chatdemo", environment: .development)
    ])
    package static let token = "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0"

    package static func json(_ text: String) -> JSONValue { try! JSONParser.parse(text) }

    /// A device token of one user's own (one token is one install: a token bound again moves).
    package static func token(of user: UserID) -> String {
        let hex = user.utf8.map { String($0, radix: 16) }.joined()
        return String((hex + String(repeating: "0", count: 64)).prefix(64))
    }

    /// An agora user with a device of its own.
    package static func register(_ user: UserID, in facade: PushFacade) async throws {
        _ = try await facade.apply(
            [
                .init(json(#"{"call":"initializeSDK","appkey":"41117440#383391","apnsCertName":"agoraTest"}"#), at: now, pointer: .root / 0),
                .init(json(#"{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"\#(token(of: user))"}"#), at: now, pointer: .root / 1),
            ], dialect: "agora-silent", user: user)
    }

    package static func groupMessage(from sender: UserID, to group: String, text: String = "hi", id: String = "m1") -> JSONValue {
        json(#"{"id":"\#(id)","conversationId":"\#(group)","from":"\#(sender)","to":"\#(group)","chatType":"GroupChat","body":{"type":"text","text":"\#(text)"}}"#)
    }
}

extension PushStateStore {
    /// Writes sent-message records through the store's update, on any backing.
    /// - Parameters:
    ///   - records: the records, an id once.
    ///   - cutoff: records sent before it may be forgotten.
    package func writeRecords(_ records: [SentMessage], forgettingBefore cutoff: Instant) async throws {
        let changes = StateChanges(
            records: records.map { RecordChange(id: $0.id, sentAt: $0.sentAt, count: 0, bytes: .encoded($0.decisions)) }, cutoff: cutoff)
        try await update(reading: StateKeys()) { _ in (changes, ()) }
    }

    /// The records of message ids sent since each question's instant, read in one snapshot (`nil`: none).
    package func records(_ questions: [(id: String, since: Instant)]) async throws -> [[UInt8]?] {
        var keys = StateKeys()
        for question in questions { _ = keys.add(StateKeys.Record(id: question.id, since: question.since)) }
        return try await snapshot(keys).records.map { $0?.bytes }
    }

    /// The user that holds a device token, `nil` when none does.
    package func owner(ofDevice token: String) async throws -> UserID? {
        var keys = StateKeys()
        let position = keys.addOwner(ofDevice: token)
        return try await snapshot(keys).deviceOwners[position]?.user
    }
}
