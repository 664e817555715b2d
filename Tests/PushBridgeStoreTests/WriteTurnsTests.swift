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

@Suite("Write turns: background work in steps")
struct WriteTurnsStepsTests {
    @Test("a request's write waiting (a claim does not count) has a step stop; the next goes after the requests and claims waiting, ahead of the other background work")
    func stepsGoOnAhead() async throws {
        let ran = Mutex<[String]>([])
        let turns = WriteTurns(DispatchQueue(label: "write-turns-steps"))
        let note: @Sendable (String) -> @Sendable () -> Void = { name in { ran.withLock { $0.append(name) } } }
        let steps = Mutex(0)
        let sawRequest = Mutex(false)
        let result = try await turns.backgroundSteps { () -> Int? in
            let step = steps.withLock { steps in
                steps += 1
                return steps
            }
            note("page-\(step)")()
            if step == 1 {
                turns.async(.claim, note("claim-1"))
                sawRequest.withLock { $0 = turns.requestWaits }  // a claim alone: no
                turns.async(.request, note("send-1"))
                turns.async(.background, note("settle-1"))
                sawRequest.withLock { $0 = !$0 && turns.requestWaits }
            }
            return step == 3 ? step : nil
        }
        try await turns.transaction(.background) {}  // after settle-1
        #expect(result == 3)
        #expect(sawRequest.withLock { $0 })
        #expect(!turns.requestWaits)
        #expect(ran.withLock { $0 } == ["page-1", "claim-1", "send-1", "page-2", "page-3", "settle-1"])
    }

    @Test("a step's error ends the work and reaches its caller; the turns go on")
    func stepErrors() async throws {
        struct Refused: Error {}
        let turns = WriteTurns(DispatchQueue(label: "write-turns-step-errors"))
        let steps = Mutex(0)
        await #expect(throws: Refused.self) {
            _ = try await turns.backgroundSteps { () throws -> Int? in
                let step = steps.withLock { steps in
                    steps += 1
                    return steps
                }
                if step == 2 { throw Refused() }
                return nil
            }
        }
        #expect(steps.withLock { $0 } == 2)
        #expect(try await turns.transaction(.request) { 42 } == 42)
    }
}
