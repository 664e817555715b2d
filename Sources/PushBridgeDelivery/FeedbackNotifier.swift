import AsyncHTTPClient
import Foundation
import NIOCore
import PushBridgeCore
import PushBridgeJSON
import Synchronization

/// Tells an app backend about removed devices and deliveries that failed for good: `POST`s JSON
/// batches to a feedback URL, retrying a batch a bounded number of times (1, 2, 4, 8 s) and
/// holding at most ``capacity`` events (the oldest are dropped, and counted, beyond that).
///
/// Body: `{"app": id, "at": epoch ms, "removed": [{"user", "token", "reason"}], "failed":
/// [{"message", "receiver", "token", "status", "reason"}]}`.
public final class FeedbackNotifier: Sendable {
    public struct Removed: Sendable, Hashable {
        public var user: String
        public var token: String
        public var reason: String
    }

    public struct Failed: Sendable, Hashable {
        public var message: String
        public var receiver: String
        public var token: String
        public var status: Int?
        public var reason: String
    }

    struct Batch: Sendable {
        var app: String
        var at: Instant
        var removed: [Removed]
        var failed: [Failed]
        var size: Int { removed.count + failed.count }
    }

    struct State {
        var queue: [Batch] = []
        var queued = 0
        var dropped = 0
        var posted = 0
        var failedPosts = 0
    }

    public let url: String
    public let capacity: Int
    public let maximumAttempts: Int
    let client: HTTPClient
    let state = Mutex(State())
    let signal = WakeSignal()

    /// - Parameters:
    ///   - url: where to `POST`.
    ///   - capacity: the most events held.
    ///   - maximumAttempts: tries per batch.
    public init(url: String, capacity: Int = 10_000, maximumAttempts: Int = 5) {
        self.url = url
        self.capacity = capacity
        self.maximumAttempts = maximumAttempts
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(5), read: .seconds(10)))
        configuration.httpVersion = .automatic
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Queues a batch (nothing when both lists are empty).
    public func notify(app: String, removed: [Removed], failed: [Failed], at: Instant) {
        guard !removed.isEmpty || !failed.isEmpty else { return }
        state.withLock { state in
            state.queue.append(Batch(app: app, at: at, removed: removed, failed: failed))
            state.queued += removed.count + failed.count
            while state.queued > capacity, let first = state.queue.first {
                state.queue.removeFirst()
                state.queued -= first.size
                state.dropped += first.size
            }
        }
        signal.wake()
    }

    /// Events posted, and events dropped (over capacity or out of attempts).
    public var counts: (posted: Int, dropped: Int) { state.withLock { ($0.posted, $0.dropped) } }

    /// Posts batches until cancelled; then tries once more to post what is left, and closes.
    public func run() async {
        while !Task.isCancelled {
            if let batch = take() {
                await post(batch, attempts: maximumAttempts)
            } else {
                await signal.wait(milliseconds: 1_000)
            }
        }
        while let batch = take() { await post(batch, attempts: 1) }
        try? await client.shutdown()
    }

    func take() -> Batch? {
        state.withLock { state in
            guard !state.queue.isEmpty else { return nil }
            let batch = state.queue.removeFirst()
            state.queued -= batch.size
            return batch
        }
    }

    func post(_ batch: Batch, attempts: Int) async {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: Self.body(batch)))
        for attempt in 0..<attempts {
            if attempt > 0 { try? await Task.sleep(nanoseconds: UInt64(1 << (attempt - 1)) * 1_000_000_000) }
            if let response = try? await client.execute(request, timeout: .seconds(10)), (200..<300).contains(Int(response.status.code)) {
                _ = try? await response.body.collect(upTo: 1 << 16)
                state.withLock { $0.posted += batch.size }
                return
            }
        }
        state.withLock { $0.dropped += batch.size }
    }

    static func body(_ batch: Batch) -> [UInt8] {
        var w = JSONWriter(capacity: 64 + batch.size * 160)
        w.raw("{\"app\":")
        w.string(batch.app)
        w.raw(",\"at\":")
        w.integer(batch.at.milliseconds)
        w.raw(",\"removed\":[")
        for (i, item) in batch.removed.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{\"user\":")
            w.string(item.user)
            w.raw(",\"token\":")
            w.string(item.token)
            w.raw(",\"reason\":")
            w.string(item.reason)
            w.raw("}")
        }
        w.raw("],\"failed\":[")
        for (i, item) in batch.failed.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{\"message\":")
            w.string(item.message)
            w.raw(",\"receiver\":")
            w.string(item.receiver)
            w.raw(",\"token\":")
            w.string(item.token)
            w.raw(",\"status\":")
            if let status = item.status { w.integer(status) } else { w.raw("null") }
            w.raw(",\"reason\":")
            w.string(item.reason)
            w.raw("}")
        }
        w.raw("]}")
        return w.bytes
    }
}
