import Dispatch
import Synchronization

/// A synchronous store's write transactions, one at a time on a serial queue, in two turns: work a
/// request waits for (a send, a settings call, a delivery claim) runs before work that may wait (a
/// push task's page, the outbox's settlements) whenever both are waiting — but never more than
/// ``requestsInARow`` in a row while background work waits, so a stream of requests cannot hold the
/// outbox's settlements (and with them delivery) back. Background work in steps
/// (``backgroundSteps(_:)``: a push task's page in parts) stops between two steps when a request's write
/// waits, so a page holds a request back for one part, not for the page nor for what is queued ahead of it.
package final class WriteTurns: Sendable {
    /// Which turn a write takes.
    package enum Turn: Sendable {
        /// A request (or a push it queued) waits for it: background work in steps stops for it
        /// (``requestWaits``).
        case request
        /// A delivery claim: it goes with the requests' writes, in their order, but background work in
        /// steps does not stop for it (a campaign's claims come every few milliseconds; stopping a
        /// page for each hands the page's CPU to deliveries).
        case claim
        /// Nobody waits for it: it runs after the requests' writes waiting (at most
        /// ``WriteTurns/requestsInARow`` of them).
        case background
    }

    private struct Waiting {
        var request = FIFO()
        var background = FIFO()
        /// The ``Turn/request`` writes among `request` (not claims).
        var requests = 0
        /// Whether a drain is queued or running (it takes what is added meanwhile).
        var draining = false
        /// Requests' writes run since the last background one.
        var inARow = 0
    }

    /// Work in arrival order, each with its turn; what was taken is dropped from the front now and then.
    private struct FIFO {
        typealias Item = (turn: Turn, work: @Sendable () -> Void)
        private var items: [Item] = []
        private var next = 0

        var isEmpty: Bool { next == items.count }

        mutating func append(_ item: Item) { items.append(item) }

        /// Puts `item` before everything waiting.
        mutating func prepend(_ item: Item) {
            if next > 0 {
                next -= 1
                items[next] = item
            } else {
                items.insert(item, at: 0)
            }
        }

        mutating func popFirst() -> Item? {
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

    /// Whether a request's write (``Turn/request``, not a claim) is waiting for its turn: background
    /// work in steps stops for it.
    package var requestWaits: Bool { waiting.withLock { $0.requests > 0 } }

    /// Runs `work` on the queue in its turn.
    package func async(_ turn: Turn, _ work: @escaping @Sendable () -> Void) {
        let starts = waiting.withLock { waiting -> Bool in
            switch turn {
            case .request, .claim:
                waiting.request.append((turn, work))
                if case .request = turn { waiting.requests += 1 }
            case .background: waiting.background.append((turn, work))
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
            if !waiting.request.isEmpty && (waiting.inARow < Self.requestsInARow || waiting.background.isEmpty), let next = waiting.request.popFirst() {
                waiting.inARow += 1
                if case .request = next.turn { waiting.requests -= 1 }
                return next.work
            }
            if let background = waiting.background.popFirst() {
                waiting.inARow = 0
                return background.work
            }
            waiting.draining = false
            return nil
        }) {
            next()
        }
    }

    /// Runs background work in steps, each a synchronous transaction in the background turn, until one
    /// gives a result: a step that gives none (it stopped because ``requestWaits``) goes again ahead of
    /// the other background work, after the requests' writes waiting. Awaited; the caller holds no
    /// thread meanwhile.
    /// - Parameter step: a transaction, run on the queue; `nil`: run it again in the next turn.
    /// - Returns: the first step's result that is not `nil`.
    /// - Throws: what a step threw (the steps before it stay written).
    package func backgroundSteps<T>(_ step: @escaping () throws -> T?) async throws -> T {
        nonisolated(unsafe) let step = step  // run on the queue alone, one step at a time
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<UnsafeResult<T>, any Error>) in
            @Sendable func run() {
                do {
                    if let value = try step() {
                        continuation.resume(returning: UnsafeResult(value: value))
                    } else {
                        waiting.withLock { $0.background.prepend((.background, run)) }  // the drain running now takes it
                    }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            self.async(.background, run)
        }.value
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
