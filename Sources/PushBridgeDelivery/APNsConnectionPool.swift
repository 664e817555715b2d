import NIOCore
import NIOSSL
import Synchronization

/// The HTTP/2 connections of one TLS identity to one APNs host: a fixed number of slots, taken in
/// turn. A slot connects on first use (one connect per slot at a time; callers of a slot that is
/// connecting wait for it); a connection that got GOAWAY, failed or closed is replaced by the next
/// request on its slot and drained: what is in flight on it finishes or fails within the request
/// deadline, then it is closed. A failed connect empties the slot, so the next request tries again.
final class APNsConnectionPool: Sendable {
    /// Where the pool connects.
    struct Target: Sendable, Hashable {
        var host: String
        var port: Int
        /// The `:authority` of requests: the host, with the port when it is not 443.
        var authority: String

        /// Reads an `https://host[:port]` base URL; `nil` for anything else.
        init?(baseURL: String) {
            guard baseURL.hasPrefix("https://") else { return nil }
            var rest = baseURL.dropFirst("https://".count)
            if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
            var host = String(rest)
            var port = 443
            if host.hasPrefix("["), let close = host.firstIndex(of: "]") {  // [::1]:8443
                let after = host[host.index(after: close)...]
                if after.hasPrefix(":") {
                    guard let p = Int(after.dropFirst()) else { return nil }
                    port = p
                }
                host = String(host[host.index(after: host.startIndex)..<close])
            } else if let colon = host.lastIndex(of: ":") {
                guard let p = Int(host[host.index(after: colon)...]) else { return nil }
                port = p
                host = String(host[..<colon])
            }
            guard !host.isEmpty, (1...65535).contains(port) else { return nil }
            self.host = host
            self.port = port
            let shown = host.contains(":") ? "[\(host)]" : host
            self.authority = port == 443 ? shown : "\(shown):\(port)"
        }
    }

    let target: Target
    let size: Int
    private let context: NIOSSLContext
    private let drainTime: TimeAmount
    private let eventLoops: any EventLoopGroup
    private let slots: Mutex<Slots>
    private let turn = Atomic<Int>(0)

    private enum Slot {
        case empty
        case connecting(generation: Int, Task<APNsConnection, any Error>)
        case ready(APNsConnection)
    }

    private struct Slots {
        var slots: [Slot]
        var generation = 0
        /// Replaced connections still draining, closed at the latest by ``shutdown()``.
        var draining: [ObjectIdentifier: APNsConnection] = [:]
        var shutDown = false
    }

    /// - Parameters:
    ///   - target: the host and port.
    ///   - context: the TLS context of the identity.
    ///   - size: how many connections.
    ///   - drainTime: how long a replaced connection keeps its streams before it is closed (the
    ///     request deadline: every request on it has ended by then).
    ///   - eventLoops: the event loops its connections run on.
    init(target: Target, context: NIOSSLContext, size: Int, drainTime: TimeAmount, eventLoops: any EventLoopGroup) {
        self.eventLoops = eventLoops
        self.target = target
        self.context = context
        self.size = max(1, size)
        self.drainTime = drainTime
        self.slots = Mutex(Slots(slots: Array(repeating: .empty, count: max(1, size))))
    }

    /// The slot that takes the next request (the slots in turn).
    func nextSlot() -> Int {
        (turn.wrappingAdd(1, ordering: .relaxed).oldValue & Int.max) % size
    }

    /// The connection of `slot` when it is open and usable, without waiting; `nil` otherwise (then
    /// ``connection(slot:connectTimeout:)`` connects it or replaces it).
    func readyConnection(slot index: Int) -> APNsConnection? {
        slots.withLock { state in
            guard !state.shutDown, case .ready(let connection) = state.slots[index], connection.isUsable else { return nil }
            return connection
        }
    }

    /// The connection of `slot`, connecting the slot when it has none (or only one it must replace).
    /// - Parameters:
    ///   - index: the slot (``nextSlot()``).
    ///   - connectTimeout: the longest a connect and its TLS handshake may take.
    /// - Returns: the connection, or how connecting failed.
    func connection(slot index: Int, connectTimeout: TimeAmount) async -> Result<APNsConnection, APNsTransportFailure> {
        enum Next {
            case use(APNsConnection)
            case wait(generation: Int, Task<APNsConnection, any Error>)
            case closed
        }
        let (target, context) = (self.target, self.context)
        let next: Next = slots.withLock { state in
            guard !state.shutDown else { return .closed }
            switch state.slots[index] {
            case .ready(let connection) where connection.isUsable:
                return .use(connection)
            case .connecting(let generation, let task):
                return .wait(generation: generation, task)
            case .ready(let old):
                state.draining[ObjectIdentifier(old)] = old
                drain(old)
                fallthrough
            case .empty:
                state.generation += 1
                let task = Task { try await APNsConnection.connect(host: target.host, port: target.port, context: context, timeout: connectTimeout, on: eventLoops) }
                state.slots[index] = .connecting(generation: state.generation, task)
                return .wait(generation: state.generation, task)
            }
        }
        switch next {
        case .closed:
            return .failure(.other("the APNs client is shut down"))
        case .use(let connection):
            return .success(connection)
        case .wait(let generation, let task):
            do {
                let connection = try await task.value
                let kept = slots.withLock { state -> Bool in
                    guard !state.shutDown else { return false }
                    if case .connecting(let current, _) = state.slots[index], current == generation { state.slots[index] = .ready(connection) }
                    return true
                }
                if !kept { connection.close() }
                return kept ? .success(connection) : .failure(.other("the APNs client is shut down"))
            } catch {
                slots.withLock { state in
                    if case .connecting(let current, _) = state.slots[index], current == generation { state.slots[index] = .empty }
                }
                return .failure(APNsTransportFailure.connecting(error))
            }
        }
    }

    /// Closes a replaced connection once its requests have had their deadline.
    private func drain(_ connection: APNsConnection) {
        connection.channel.eventLoop.scheduleTask(in: drainTime) { [weak self] in
            connection.close()
            self?.slots.withLock { _ = $0.draining.removeValue(forKey: ObjectIdentifier(connection)) }
        }
    }

    /// Closes every connection (in flight: failed) and refuses new requests.
    func shutdown() async {
        let (connections, connecting) = slots.withLock { state -> ([APNsConnection], [Task<APNsConnection, any Error>]) in
            state.shutDown = true
            var connections = Array(state.draining.values)
            var connecting: [Task<APNsConnection, any Error>] = []
            for slot in state.slots {
                switch slot {
                case .ready(let connection): connections.append(connection)
                case .connecting(_, let task): connecting.append(task)
                case .empty: break
                }
            }
            state.slots = Array(repeating: .empty, count: size)
            state.draining = [:]
            return (connections, connecting)
        }
        for connection in connections {
            connection.close()
            try? await connection.channel.closeFuture.get()
        }
        for task in connecting {
            if let connection = try? await task.value {
                connection.close()
                try? await connection.channel.closeFuture.get()
            }
        }
    }

    /// How many connections are open or opening now (for tests and metrics).
    var openConnections: Int {
        slots.withLock { state in
            state.slots.filter { if case .empty = $0 { false } else { true } }.count + state.draining.count
        }
    }
}
