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

    /// The adapter for a dialect id, or an error naming the pointer, the known ids and the likeliest one.
    public func adapter(_ id: String, at pointer: JSONPointer) throws -> any DialectAdapter {
        guard let adapter = adapter(id) else {
            throw InputError(.unknownReference, at: pointer, expected: "a dialect: one of " + ids.joined(separator: ", "),
                found: Self.unknown(id, among: ids))
        }
        return adapter
    }

    /// The profile for an id, or an error naming the pointer, the known ids and the likeliest one.
    public func profile(_ id: String, at pointer: JSONPointer) throws -> Profile {
        guard let profile = profile(id) else {
            let known = profiles.map(\.id)
            throw InputError(.unknownReference, at: pointer, expected: "a profile: one of " + known.joined(separator: ", "), found: Self.unknown(id, among: known))
        }
        return profile
    }

    /// `"easemob"` or `"easemob" (did you mean easemob-legacy?)`.
    static func unknown(_ id: String, among known: [String]) -> String {
        "\"\(id)\"" + (suggestion(for: id, among: known).map { " (did you mean \($0)?)" } ?? "")
    }

    /// The known id closest to a mistyped one: one that starts with it or contains it, else the one
    /// within a third of its length in edit distance; `nil` when none is close.
    /// - Parameters:
    ///   - id: what was given.
    ///   - known: the valid ids.
    public static func suggestion(for id: String, among known: [String]) -> String? {
        let given = id.lowercased()
        guard !given.isEmpty else { return nil }
        if let contained = known.first(where: { $0.hasPrefix(given) || (given.count >= 4 && $0.contains(given)) }) { return contained }
        let scored = known.map { ($0, editDistance(Array(given), Array($0))) }.min { $0.1 < $1.1 }
        guard let (best, distance) = scored, distance <= max(2, best.count / 3) else { return nil }
        return best
    }

    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
