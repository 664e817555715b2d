import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore

// Tencent Cloud IM's attributes (`all_member_push/im_set_attr_name` …, Specification §14): the app
// names up to ten attributes, each user has a value of some; a push task may go to the users with
// given values. Each call one read → decide → commit; a refused call writes nothing.
extension PushFacade {
    /// Why an attribute call was refused.
    public struct AttributeRefusal: Error, Hashable, Sendable, CustomStringConvertible {
        private enum Reason: Hashable, Sendable {
            case unknownUser
            case unknownAttribute
            case nameTaken
            case slotNamed(String)
        }
        private let reason: Reason
        /// The user, attribute name or slot the call named.
        public let subject: String

        /// The app has no such user.
        public static func unknownUser(_ user: UserID) -> Self { Self(reason: .unknownUser, subject: user) }
        /// The app has named no such attribute.
        public static func unknownAttribute(_ name: String) -> Self { Self(reason: .unknownAttribute, subject: name) }
        /// Another slot has this name.
        public static func nameTaken(_ name: String) -> Self { Self(reason: .nameTaken, subject: name) }
        /// The slot has another name already (a name does not change).
        public static func slotNamed(_ slot: Int, as name: String) -> Self { Self(reason: .slotNamed(name), subject: String(slot)) }

        public var isUnknownUser: Bool { reason == .unknownUser }

        public var description: String {
            switch reason {
            case .unknownUser: "the user \(JSONValue.string(subject).compactText) does not exist"
            case .unknownAttribute: "the app has no attribute named \(JSONValue.string(subject).compactText)"
            case .nameTaken: "another slot is named \(JSONValue.string(subject).compactText)"
            case .slotNamed(let name): "slot \(subject) is named \(JSONValue.string(name).compactText) already (a name does not change)"
            }
        }
    }

    /// The attribute slots an app has (Tencent: 0–9).
    public static let attributeSlots = 0...9

    /// The app's attribute names, by slot.
    public func attributeNames() async throws -> [(slot: Int, name: String)] {
        var keys = StateKeys()
        let page = keys.addPage(.attributeNames)
        return try await store.snapshot(keys).labelPages[page].attributes.map { (Int($0.key) ?? 0, $0.value) }
    }

    /// Names attribute slots: naming a slot again with its name is no change; another name for a named
    /// slot, or a name another slot has, is refused.
    /// - Parameter names: slots (in ``attributeSlots``) and their names.
    /// - Throws: ``AttributeRefusal``: nothing is written.
    public func nameAttributes(_ names: [(slot: Int, name: String)]) async throws {
        var keys = StateKeys()
        let page = keys.addPage(.attributeNames)
        try await update(
            PlannedUpdate(keys: keys) { snapshot in
                var named = Dictionary(uniqueKeysWithValues: snapshot.labelPages[page].attributes.map { (Int($0.key) ?? 0, $0.value) })
                var new: [(slot: Int, name: String)] = []
                for (slot, name) in names where named[slot] != name {
                    if let other = named[slot] { throw AttributeRefusal.slotNamed(slot, as: other) }
                    if named.values.contains(name) { throw AttributeRefusal.nameTaken(name) }
                    named[slot] = name
                    new.append((slot, name))
                }
                return (StateChanges(labels: new.isEmpty ? [] : [.nameAttributes(new)]), ())
            })
    }

    /// Each user's attribute values, in name order.
    /// - Parameter users: the users asked about.
    /// - Throws: ``AttributeRefusal`` for a user the app does not have.
    public func attributes(of users: [UserID]) async throws -> [[UserAttribute]] {
        var keys = StateKeys()
        let known = users.map { keys.addUser($0) }
        let pages = users.map { keys.addPage(.attributesOf(user: $0)) }
        let snapshot = try await store.snapshot(keys)
        for (user, position) in zip(users, known) where snapshot.users[position] == nil { throw AttributeRefusal.unknownUser(user) }
        return pages.map { snapshot.labelPages[$0].attributes.map { UserAttribute(name: $0.key, value: $0.value) } }
    }

    /// Sets users' values of named attributes.
    /// - Parameter changes: each user and its values.
    /// - Throws: ``AttributeRefusal`` for an unknown user or attribute: nothing is written.
    public func setAttributes(_ changes: [(user: UserID, values: [UserAttribute])]) async throws {
        try await changeAttributes(changes.map { ($0.user, $0.values.map(\.name)) }) { user, _ in
            .setAttributes(user: user, changes.first { $0.user == user }!.values)
        }
    }

    /// Takes users' values of named attributes (a value a user does not have is no change).
    /// - Parameter changes: each user and the attributes' names.
    /// - Throws: ``AttributeRefusal`` for an unknown user or attribute: nothing is written.
    public func removeAttributes(_ changes: [(user: UserID, names: [String])]) async throws {
        try await changeAttributes(changes) { user, names in .removeAttributes(user: user, names: names) }
    }

    /// One read of the names and the users, then one change a user.
    private func changeAttributes(_ changes: [(user: UserID, names: [String])], _ change: @escaping @Sendable (UserID, [String]) -> LabelChange) async throws {
        var keys = StateKeys()
        let page = keys.addPage(.attributeNames)
        let known = changes.map { keys.addUser($0.user) }
        try await update(
            PlannedUpdate(keys: keys) { snapshot in
                let named = Set(snapshot.labelPages[page].attributes.map(\.value))
                for (i, entry) in changes.enumerated() {
                    guard snapshot.users[known[i]] != nil else { throw AttributeRefusal.unknownUser(entry.user) }
                    if let unknown = entry.names.first(where: { !named.contains($0) }) { throw AttributeRefusal.unknownAttribute(unknown) }
                }
                return (StateChanges(labels: changes.map { change($0.user, $0.names) }), ())
            })
    }
}
