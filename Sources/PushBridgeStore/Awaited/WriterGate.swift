import Synchronization

/// One holder at a time, awaited: a waiter holds no thread. A node's writer of one store on a store
/// over the network (PostgreSQL's), where a transaction's statements are awaited and an `NSLock`
/// (held by a thread) cannot span them.
package final class WriterGate: Sendable {
    private struct State {
        var held = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    package init() {}

    /// Takes the gate when it is free now; `false` otherwise (never waits).
    package func tryEnter() -> Bool {
        state.withLock { state in
            guard !state.held else { return false }
            state.held = true
            return true
        }
    }

    /// Takes the gate, waiting (awaited, in turn) while another holds it.
    package func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let entered = state.withLock { state -> Bool in
                guard state.held else {
                    state.held = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if entered { continuation.resume() }
        }
    }

    /// Gives the gate to the next waiter, or frees it.
    package func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.held = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }

    /// Runs `body` holding the gate.
    package func holding<T>(_ body: () async throws -> T) async throws -> T {
        await enter()
        defer { leave() }
        return try await body()
    }
}
