import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore

/// What a vendor REST call said about a group beyond its members (Specification §14): its owner, name,
/// limits, admins, block list, whether its messages are pushed offline, and the vendor's own
/// fields as given (kept for the vendor's answers, no effect on decisions).
public struct GroupProfile: Hashable, Sendable {
    /// The owner (also a member), if the group has one.
    public var owner: UserID?
    /// The group's name.
    public var name: String
    /// The most members the group may have.
    public var maxUsers: Int
    /// Whether the group's messages are pushed offline: `false` for an Easemob / Agora Chat group
    /// created with `maxusers` above 3,000 (Specification §14); then decisions say `large-group`.
    public var offlinePush: Bool
    /// Administrators (Tencent `Role` `Admin`).
    public var admins: [UserID]
    /// Users on the group's block list: not members, and may not be added (Easemob / Agora Chat).
    public var blocked: [UserID]
    /// Members whose Tencent `MsgFlag` is `Discard` (they receive nothing; their remind type for the
    /// group is `None`).
    public var discarding: [UserID]
    /// When the group was created.
    public var createdAt: Instant
    /// The vendor's own fields (Easemob `description`, `public`, …; Tencent `Type`, `Introduction`, …).
    public var vendorFields: JSONObject

    /// - Parameters:
    ///   - owner: the owner, if any.
    ///   - name: the group's name.
    ///   - maxUsers: the member limit.
    ///   - offlinePush: whether its messages are pushed offline.
    ///   - createdAt: when it was created.
    ///   - vendorFields: the vendor's own fields.
    public init(owner: UserID?, name: String, maxUsers: Int, offlinePush: Bool = true, createdAt: Instant, vendorFields: JSONObject = JSONObject()) {
        self.owner = owner
        self.name = name
        self.maxUsers = maxUsers
        self.offlinePush = offlinePush
        self.admins = []
        self.blocked = []
        self.discarding = []
        self.createdAt = createdAt
        self.vendorFields = vendorFields
    }

    /// The bytes a store keeps: compact JSON.
    var encoded: [UInt8] {
        var w = JSONWriter(capacity: 128)
        var o: [(key: String, value: JSONValue)] = [
            ("name", .string(name)), ("maxUsers", .int(Int64(maxUsers))), ("offlinePush", .bool(offlinePush)), ("createdAt", .int(createdAt.milliseconds)),
        ]
        if let owner { o.append(("owner", .string(owner))) }
        if !admins.isEmpty { o.append(("admins", .array(admins.map(JSONValue.string)))) }
        if !blocked.isEmpty { o.append(("blocked", .array(blocked.map(JSONValue.string)))) }
        if !discarding.isEmpty { o.append(("discarding", .array(discarding.map(JSONValue.string)))) }
        if !vendorFields.isEmpty { o.append(("vendor", .object(vendorFields))) }
        w.write(.object(JSONObject(o)))
        return w.bytes
    }

    /// Reads the bytes ``encoded`` wrote.
    /// - Parameters:
    ///   - bytes: the stored bytes.
    ///   - group: the group, for the error.
    init(decoding bytes: [UInt8], group: String) throws {
        do {
            let value = try JSONParser.parse(bytes)
            guard case .object(let o) = value, case .string(let name)? = o["name"], case .int(let maxUsers)? = o["maxUsers"],
                case .bool(let offlinePush)? = o["offlinePush"], case .int(let createdAt)? = o["createdAt"]
            else { throw InputError(.invalidValue, at: .root, expected: "a stored group profile") }
            func list(_ key: String) -> [UserID] {
                guard case .array(let items)? = o[key] else { return [] }
                return items.compactMap { if case .string(let s) = $0 { return s } else { return nil } }
            }
            var owner: UserID?
            if case .string(let s)? = o["owner"] { owner = s }
            var vendor = JSONObject()
            if case .object(let v)? = o["vendor"] { vendor = v }
            self.init(owner: owner, name: name, maxUsers: Int(maxUsers), offlinePush: offlinePush, createdAt: Instant(milliseconds: createdAt), vendorFields: vendor)
            admins = list("admins")
            blocked = list("blocked")
            discarding = list("discarding")
        } catch {
            throw StoreError(.unexpectedValue, "the stored profile of group \"\(group)\" does not read: \(error)")
        }
    }
}
