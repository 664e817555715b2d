import Dispatch
import Synchronization

/// A synchronous store's write transactions, one at a time on a serial queue, in two turns: work a
/// request waits for (a send, a settings call, a delivery claim) runs before work that may wait (a
/// push task's page, the outbox's settlements) whenever both are waiting — but never more than
/// ``requestsInARow`` in a row while background work waits, so a stream of requests cannot hold the
/// outbox's settlements (and with them delivery) back. A long page then holds a request back for at
/// most the one transaction running, not for every page and settlement queued ahead of it.
package final class WriteTurns: Sendable {
    /// Which turn a write takes.
    package enum Turn: Sendable {
        /// A request (or a push it queued) waits for it.
        case request
        /// Nobody waits for it: it runs after the requests' writes waiting (at most
        /// ``WriteTurns/requestsInARow`` of them).
        case background
    }

    private struct Waiting {
        var request = FIFO()
        var background = FIFO()
        /// Whether a drain is queued or running (it takes what is added meanwhile).
        var draining = false
        /// Requests' writes run since the last background one.
        var inARow = 0
    }

    /// Work in arrival order; what was taken is dropped from the front now and then.
    private struct FIFO {
        private var items: [@Sendable () -> Void] = []
        private var next = 0

        var isEmpty: Bool { next == items.count }

        mutating func append(_ item: @escaping @Sendable () -> Void) { items.append(item) }

        mutating func popFirst() -> (@Sendable () -> Void)? {
            guard next < items.count else { return nil }
            defer {
                next += 1
                if next == items.count {
                    items.removeAll(keepingCapacity: true)
                    next = 0
                } else if next >= 64 && next * 2 >= items.count {
                    items.removeFirst(next)
                    next = 0
                }
            }
            return items[next]
        }
    }

    /// The most requests' writes run in a row while background work waits.
    package static let requestsInARow = 4

    private let queue: DispatchQueue
    private let waiting = Mutex(Waiting())

    /// - Parameter queue: the serial queue the transactions run on.
    package init(_ queue: DispatchQueue) { self.queue = queue }

    /// Runs `work` on the queue in its turn.
    package func async(_ turn: Turn, _ work: @escaping @Sendable () -> Void) {
        let starts = waiting.withLock { waiting -> Bool in
            switch turn {
            case .request: waiting.request.append(work)
            case .background: waiting.background.append(work)
            }
            guard !waiting.draining else { return false }
            waiting.draining = true
            return true
        }
        if starts { queue.async { self.drain() } }
    }

    /// Runs the waiting work, requests first, until none is left; one piece at a time, each taken
    /// after the one before it ended (a request that arrives meanwhile goes next).
    private func drain() {
        while let next = waiting.withLock({ waiting -> (@Sendable () -> Void)? in
            if !waiting.request.isEmpty && (waiting.inARow < Self.requestsInARow || waiting.background.isEmpty) {
                waiting.inARow += 1
                return waiting.request.popFirst()
            }
            if let background = waiting.background.popFirst() {
                waiting.inARow = 0
                return background
            }
            waiting.draining = false
            return nil
        }) {
            next()
        }
    }

    /// Runs a synchronous transaction in its turn and awaits its end; the caller holds no thread meanwhile.
    /// - Parameters:
    ///   - turn: its turn.
    ///   - body: the transaction, run once on the queue.
    package func transaction<T>(_ turn: Turn, _ body: @escaping () throws -> T) async throws -> T {
        nonisolated(unsafe) let body = body  // run once, on the queue, before the continuation resumes
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<UnsafeResult<T>, any Error>) in
            self.async(turn) { continuation.resume(with: Result { UnsafeResult(value: try body()) }) }
        }.value
    }
}
