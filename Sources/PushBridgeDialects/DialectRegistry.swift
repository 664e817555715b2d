import PushBridgeCore
import PushBridgeJSON

/// The dialects PushBridge speaks, by id.
public struct DialectRegistry: Sendable {
    public let adapters: [any DialectAdapter]

    public init(adapters: [any DialectAdapter]) { self.adapters = adapters }

    /// Every built-in dialect.
    public static let standard = DialectRegistry(adapters: [EasemobLegacyAdapter(), AgoraSilentAdapter(), TencentTIMAdapter()])

    public var ids: [String] { adapters.map(\.id) }

    public func adapter(_ id: String) -> (any DialectAdapter)? { adapters.first { $0.id == id } }

    /// Every profile: the built-in ones and those of registered dialects.
    public var profiles: [Profile] {
        var all = Profile.builtIn
        for adapter in adapters where !all.contains(adapter.profile) { all.append(adapter.profile) }
        return all
    }

    public func profile(_ id: String) -> Profile? { profiles.first { $0.id == id } }

    /// The adapter for a dialect id, or an error naming the pointer and the known ids.
    public func adapter(_ id: String, at pointer: JSONPointer) throws -> any DialectAdapter {
        guard let adapter = adapter(id) else {
            throw InputError(.unknownReference, at: pointer, expected: "a dialect: one of " + ids.joined(separator: ", "), found: "\"\(id)\"")
        }
        return adapter
    }

    /// The profile for an id, or an error naming the pointer and the known ids.
    public func profile(_ id: String, at pointer: JSONPointer) throws -> Profile {
        guard let profile = profile(id) else {
            throw InputError(
                .unknownReference, at: pointer, expected: "a profile: one of " + profiles.map(\.id).joined(separator: ", "),
                found: "\"\(id)\"")
        }
        return profile
    }
}
