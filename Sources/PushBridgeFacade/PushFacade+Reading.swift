import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeRecordCoding
import PushBridgeStore

// A request's reads, awaited: what it reads named up front and read in one snapshot (a store over
// the network holds no thread meanwhile).
extension PushFacade {
    /// Reads what `scope` names in one snapshot and runs `body` on it.
    /// - Parameters:
    ///   - scope: what the read needs; anything else `body` asks for throws ``StateEdit/NotRead``.
    ///   - body: the read, on the state as read (its changes, if any, are not kept).
    /// - Returns: what `body` returned.
    public func reading<T>(_ scope: EditScope, _ body: (StateEdit) throws -> T) async throws -> T {
        var keys = StateKeys()
        let positions = EditKeys(scope, into: &keys)
        let snapshot = try await store.snapshot(keys)
        return try body(StateEdit(keys: positions, snapshot: snapshot, registry: registry))
    }

    /// Whether a target exists (a user with a record, a group with members or a profile), read alone.
    func exists(_ target: StateKeys.Target) async throws -> Bool {
        var keys = StateKeys()
        let position = keys.add(target)
        return try await store.snapshot(keys).knownTargets[position]
    }

    /// A message's decisions as recorded when it was sent within the repeat window, awaited.
    /// - Parameters:
    ///   - id: the message id.
    ///   - now: the instant the repeat window ends at.
    public func sentMessage(_ id: String, now: Instant) async throws -> [ReceiverDecision]? {
        guard !id.isEmpty else { return nil }
        var keys = StateKeys()
        _ = keys.add(StateKeys.Record(id: id, since: repeatCutoff(at: now)))
        guard let record = try await store.snapshot(keys).records.first ?? nil else { return nil }
        return try SentMessageRecord.decode(record.bytes, messageID: id, roll: { record.roll($0) })
    }

    /// The groups a user is a member of (every group with members or a profile, for `nil`), in
    /// code-point order, awaited.
    /// - Parameter user: the member, or `nil`.
    public func groups(containing user: UserID? = nil) async throws -> [String] {
        try await store.groups(containing: user)
    }

    /// A message's deliveries and where each stands, awaited.
    /// - Parameter id: the message id.
    public func deliveries(ofMessage id: String) async throws -> [DeliveryRecord] {
        try await store.deliveries(ofMessage: id)
    }
}

extension StateEdit {
    /// A user's devices as push bindings (``PushFacade/pushBindings(of:)``): the scope reads the
    /// user and its bindings.
    /// - Parameter user: the user.
    public func pushBindings(of user: UserID) throws -> [PushBinding] {
        guard let record = try self.user(user) else { return [] }
        return PushBinding.listing(record.state.devices, bound: try storedBindings(of: user))
    }

    /// A dialect's query on a user's state (``PushFacade/query(_:dialect:user:now:pointer:)``): the
    /// scope reads the app and the user.
    public func query(_ query: JSONValue, dialect: String, user: UserID, now: Instant, pointer: JSONPointer = .root) throws -> JSONValue {
        let adapter = try registry.adapter(dialect, at: .root)
        _ = try adapter.queryName(of: query, at: pointer)
        let world = PushWorld(app: try app(), users: [user: PushFacade.state(of: try self.user(user), user: user, adapter: adapter)])
        return try adapter.query(query, at: pointer, in: world, context: CallContext(caller: user, at: now))
    }
}

extension PushBinding {
    /// A user's devices as push bindings: the ones bound through vendor REST with their device id
    /// (those of its devices), then every other device with its token as its device id.
    /// - Parameters:
    ///   - devices: the user's devices.
    ///   - bound: its stored bindings.
    static func listing(_ devices: [Device], bound: [PushBinding]) -> [PushBinding] {
        let kept = bound.filter { binding in devices.contains { $0.token == binding.token } }
        let others = devices.filter { device in !kept.contains { $0.token == device.token } }.map {
            PushBinding(deviceID: $0.token, notifier: $0.certificate.name ?? $0.certificate.busiId ?? "", token: $0.token)
        }
        return kept + others
    }
}
