import Foundation
import PushBridgeCore
import PushBridgeStore
import PushBridgeTestSupport
import Synchronization
import Testing

/// `PushStateStore.backgroundUpdates(_:)`: updates in order, each reading what the ones before it
/// wrote; on SQLite a request's write arriving meanwhile goes between two of them, after what ran
/// was committed.
@Suite("Background updates")
struct BackgroundUpdatesTests {
    /// An update that adds `name` to group `g`'s members and returns the members it read.
    private static func adding(_ name: UserID, then: (@Sendable () -> Void)? = nil) -> StateUpdate<[UserID]> {
        var keys = StateKeys()
        let position = keys.addMembers(of: "g")
        return StateUpdate(keys: keys) { snapshot in
            let members = snapshot.memberLists[position]
            then?()
            return (StateChanges(groups: [.init(group: "g", members: members + [name])]), members)
        }
    }

    private static func members(_ store: any PushStateStore) async throws -> Set<UserID> {
        var keys = StateKeys()
        let position = keys.addMembers(of: "g")
        return Set(try await store.snapshot(keys).memberLists[position])
    }

    @Test("SQLite: a request's write that waits goes between two updates, after the first is committed")
    func requestGoesBetween() async throws {
        let store = try SQLiteStateStore(path: temporaryDatabase())
        #expect(store.interleavesBackgroundUpdates)
        let request = RequestOnTheSide(store: store)
        // The first update starts a request's update, and waits until it has queued, before it ends.
        let first = Self.adding("p1") { request.start() }
        let seen = try await store.backgroundUpdates([first, Self.adding("p2"), Self.adding("p3")])
        #expect(try await request.seen() == ["p1"])
        #expect(seen.map(Set.init) == [[], ["p1", "req"], ["p1", "req", "p2"]])
        #expect(try await Self.members(store) == ["p1", "req", "p2", "p3"])
    }

    @Test("with no request waiting, each update reads what the ones before it wrote", arguments: ["memory", "sqlite"])
    func inOrder(_ kind: String) async throws {
        let store: any PushStateStore = kind == "memory" ? MemoryStateStore() : try SQLiteStateStore(path: temporaryDatabase())
        let seen = try await store.backgroundUpdates([Self.adding("p1"), Self.adding("p2"), Self.adding("p3")])
        #expect(seen.map(Set.init) == [[], ["p1"], ["p1", "p2"]])
        #expect(try await Self.members(store) == ["p1", "p2", "p3"])
    }

    @Test("an update that throws writes nothing of its own turn; the turns go on", arguments: ["memory", "sqlite"])
    func refusal(_ kind: String) async throws {
        struct Refused: Error {}
        let store: any PushStateStore = kind == "memory" ? MemoryStateStore() : try SQLiteStateStore(path: temporaryDatabase())
        let refusing = StateUpdate<[UserID]>(keys: StateKeys()) { _ in throw Refused() }
        await #expect(throws: Refused.self) { _ = try await store.backgroundUpdates([Self.adding("p1"), refusing, Self.adding("p3")]) }
        #expect(try await Self.members(store).isSubset(of: ["p1"]))
        _ = try await store.backgroundUpdates([Self.adding("p4")])
        #expect(try await Self.members(store).contains("p4"))
    }
}

/// A request's update ("req" added to `g`) started from inside another update, which waits until it
/// has queued.
private final class RequestOnTheSide: Sendable {
    let store: SQLiteStateStore
    private let task = Mutex<Task<[UserID], any Error>?>(nil)

    init(store: SQLiteStateStore) { self.store = store }

    func start() {
        task.withLock {
            $0 = Task { [self] in
                var keys = StateKeys()
                let position = keys.addMembers(of: "g")
                return try await store.update(reading: keys) { snapshot in
                    let members = snapshot.memberLists[position]
                    return (StateChanges(groups: [.init(group: "g", members: members + ["req"])]), members)
                }
            }
        }
        // However long the task takes to start on a loaded machine (bounded: the test then fails).
        let deadline = Date().addingTimeInterval(60)
        while !store.requestWaits && Date() < deadline { usleep(1_000) }
    }

    /// The members the request's update read.
    func seen() async throws -> [UserID] {
        guard let task = task.withLock({ $0 }) else { return [] }
        return try await task.value
    }
}
