import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore

// Groups as vendor REST manages them (Specification §14): a profile beside the members, and Tencent's
// per-group message sequence.
extension PushFacade {
    /// A group's profile, `nil` for a group made by its membership alone (or none at all).
    /// - Parameter group: the group id.
    public func groupProfile(of group: String) async throws -> GroupProfile? {
        try await reading(EditScope(groups: [group])) { try $0.groupProfile(of: group) }
    }

    /// Whether a group exists: it has a profile or members.
    /// - Parameter group: the group id.
    public func groupExists(_ group: String) async throws -> Bool {
        try await exists(.group(group))
    }

    /// Writes a group's profile (creating or changing the group).
    /// - Parameters:
    ///   - profile: the profile.
    ///   - group: the group id.
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

    /// A group's message sequence (Tencent `MsgSeq`): 0 before its first message.
    /// - Parameters:
    ///   - group: the group id.
    ///   - advancing: move it on first, for a new message.
    public func messageSequence(of group: String, advancing: Bool) async throws -> Int64 {
        var keys = StateKeys()
        let position = keys.addSequence(of: group)
        guard advancing else { return try await store.snapshot(keys).sequences[position] }
        return try await store.update(reading: keys) { snapshot in
            (StateChanges(groups: [.init(group: group, sequenceAdvances: 1)]), snapshot.sequences[position] + 1)
        }
    }
}
