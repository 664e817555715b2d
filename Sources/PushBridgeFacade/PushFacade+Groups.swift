import Foundation
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeStore

// Group membership, and removing a user.
extension PushFacade {
    /// Replaces a group's members (the order is kept: it is the order decisions come in).
    /// - Parameters:
    ///   - members: distinct, non-empty user ids.
    ///   - group: the group id.
    public func setMembers(_ members: [UserID], of group: String) async throws {
        try await update(Self.setting(members, of: group))
    }

    static func setting(_ members: [UserID], of group: String) throws -> PlannedUpdate<Void> {
        try checkMembers(members, of: group)
        return PlannedUpdate { _ in (StateChanges(groups: [.init(group: group, members: members)]), ()) }
    }

    static func checkMembers(_ members: [UserID], of group: String) throws {
        try checkGroup(group)
        var seen = Set<UserID>()
        for (i, member) in members.enumerated() {
            try Self.checkUser(member, at: JSONPointer.root / i)
            guard seen.insert(member).inserted else {
                throw InputError(.invalidValue, at: JSONPointer.root / i, expected: "each member once", found: "\"\(member)\" again")
            }
        }
    }

    /// A group's members in order.
    public func members(of group: String) async throws -> [UserID] {
        var keys = StateKeys()
        let list = keys.addMembers(of: group)
        return try await store.snapshot(keys).memberLists[list]
    }

    /// Adds members at the end of a group, in order; users already in the group stay where they are.
    /// - Parameters:
    ///   - members: non-empty user ids, each listed once.
    ///   - group: the group id.
    /// - Returns: the members after the change.
    @discardableResult
    public func addMembers(_ members: [UserID], to group: String) async throws -> [UserID] {
        try await update(Self.adding(members, to: group))
    }

    static func adding(_ members: [UserID], to group: String) throws -> PlannedUpdate<[UserID]> {
        try checkMembers(members, of: group)
        var keys = StateKeys()
        let list = keys.addMembers(of: group)
        return PlannedUpdate(keys: keys) { snapshot in
            var all = snapshot.memberLists[list]
            let present = Set(all)
            all += members.filter { !present.contains($0) }
            return (StateChanges(groups: [.init(group: group, members: all)]), all)
        }
    }

    /// Removes one member from a group; the others keep their order.
    /// - Parameters:
    ///   - member: the user.
    ///   - group: the group id.
    /// - Returns: the members after the change.
    /// - Throws: `InputError` (`unknown-reference` at `/user`) when the user is not a member.
    @discardableResult
    public func removeMember(_ member: UserID, from group: String) async throws -> [UserID] {
        try await update(Self.removing(member, from: group))
    }

    static func removing(_ member: UserID, from group: String) -> PlannedUpdate<[UserID]> {
        var keys = StateKeys()
        let list = keys.addMembers(of: group)
        return PlannedUpdate(keys: keys) { snapshot in
            var all = snapshot.memberLists[list]
            guard let index = all.firstIndex(of: member) else {
                throw InputError(.unknownReference, at: JSONPointer.root / "user", expected: "a member of group \"\(group)\"", found: "\"\(member)\"")
            }
            all.remove(at: index)
            return (StateChanges(groups: [.init(group: group, members: all)]), all)
        }
    }

    /// Forgets a user: settings, devices, badge counter and group memberships.
    /// - Parameter user: the user.
    /// - Throws: `InputError` (`unknown-reference` at `/user`) when the store does not know the user.
    public func removeUser(_ user: UserID) async throws {
        try await edit(EditScope(users: [user])) { try $0.removeUser(user) }
    }
}
