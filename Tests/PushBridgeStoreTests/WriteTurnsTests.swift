import Dispatch
import PushBridgeStore
import Synchronization
import Testing

@Suite("Write turns")
struct WriteTurnsTests {
    /// What ran, in order, once the queue has drained.
    private func order(_ enqueue: @escaping @Sendable (WriteTurns, @escaping @Sendable (String) -> @Sendable () -> Void) -> Void) async -> [String] {
        let ran = Mutex<[String]>([])
        let turns = WriteTurns(DispatchQueue(label: "write-turns-test"))
        let note: @Sendable (String) -> @Sendable () -> Void = { name in { ran.withLock { $0.append(name) } } }
        // Everything is queued from inside the first write, so all of it waits together; the last
        // background write (queued after the rest, requests never outnumbering four in a row before
        // it) ends the wait once everything before it has run.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            turns.async(.request) {
                ran.withLock { $0.append("first") }
                enqueue(turns, note)
                turns.async(.background) { done.resume() }
            }
        }
        return ran.withLock { $0 }
    }

    @Test("requests' writes waiting run before background ones, at most four in a row while background work waits")
    func requestsFirst() async {
        let ran = await order { turns, note in
            turns.async(.background, note("page-1"))
            turns.async(.background, note("settle-1"))
            for i in 1...6 { turns.async(.request, note("send-\(i)")) }
        }
        #expect(ran == ["first", "send-1", "send-2", "send-3", "page-1", "send-4", "send-5", "send-6", "settle-1"])
    }

    @Test("with no request waiting, background writes run in arrival order; a request that arrives meanwhile goes next")
    func backgroundInOrder() async {
        let ran = await order { turns, note in
            turns.async(.background) {
                note("page-1")()
                turns.async(.request, note("send-1"))
            }
            turns.async(.background, note("page-2"))
            turns.async(.background, note("page-3"))
        }
        #expect(ran == ["first", "page-1", "send-1", "page-2", "page-3"])
    }

    @Test("a transaction's error reaches its caller; the turns go on")
    func errors() async throws {
        struct Refused: Error {}
        let turns = WriteTurns(DispatchQueue(label: "write-turns-errors"))
        await #expect(throws: Refused.self) { try await turns.transaction(.request) { () throws -> Int in throw Refused() } }
        #expect(try await turns.transaction(.background) { 42 } == 42)
    }
}
