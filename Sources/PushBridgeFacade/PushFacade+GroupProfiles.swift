import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore

// Groups as vendor REST manages them (Specification §14): a profile beside the members, and Tencent's
// per-group message sequence.
extension PushFacade {
    /// A group's profile, `nil` for a group made by its membership alone (or none at all).
    /// - Parameter group: the group id.
    public func groupProfile(of group: String) throws -> GroupProfile? {
        try store.read { try $0.groupProfile(of: group).map { try GroupProfile(decoding: $0, group: group) } }
    }

    /// Whether a group exists: it has a profile or members.
    /// - Parameter group: the group id.
    public func groupExists(_ group: String) throws -> Bool {
        try store.read { try $0.exists(.group(group)) }
    }

    /// Writes a group's profile (creating or changing the group).
    /// - Parameters:
    ///   - profile: the profile.
    ///   - group: the group id.
    public func setGroupProfile(_ profile: GroupProfile, of group: String) throws {
        try write(Self.setting(profile, of: group))
    }

    /// `setGroupProfile(_:of:)`, awaited (the store's update).
    public func setGroupProfile(_ profile: GroupProfile, of group: String) async throws {
        try await update(Self.setting(profile, of: group))
    }

    static func setting(_ profile: GroupProfile, of group: String) throws -> PlannedUpdate<Void> {
        try checkGroup(group)
        let bytes = profile.encoded
        return PlannedUpdate { _ in (StateChanges(groups: [.init(group: group, profile: .some(bytes))]), ()) }
    }

    /// Deletes a group: its members, profile and message sequence. Its members' own settings for
    /// the group's conversation stay (as the vendors keep a user's settings).
    /// - Parameter group: the group id.
    /// - Returns: whether the group existed.
    @discardableResult
    public func deleteGroup(_ group: String) throws -> Bool {
        try write(Self.deleting(group))
    }

    /// `deleteGroup(_:)`, awaited (the store's update).
    @discardableResult
    public func deleteGroup(_ group: String) async throws -> Bool {
        try await update(Self.deleting(group))
    }

    static func deleting(_ group: String) -> PlannedUpdate<Bool> {
        var keys = StateKeys()
        let target = keys.add(StateKeys.Target.group(group))
        return PlannedUpdate(keys: keys) { snapshot in
            (StateChanges(groups: [.init(group: group, members: [], profile: .some(nil))]), snapshot.knownTargets[target])
        }
    }

    /// The groups that exist, in id order; with `user`, the groups it is a member of.
    /// - Parameter user: a member, or `nil` for every group of the app.
    public func groups(containing user: UserID? = nil) throws -> [String] {
        try store.read { try $0.groups(containing: user) }
    }

    /// A group's message sequence (Tencent `MsgSeq`): 0 before its first message.
    /// - Parameters:
    ///   - group: the group id.
    ///   - advancing: move it on first, for a new message.
    public func messageSequence(of group: String, advancing: Bool) throws -> Int64 {
        advancing ? try store.write { try $0.messageSequence(of: group, advancing: true) } : try store.read { try $0.messageSequence(of: group, advancing: false) }
    }
}
