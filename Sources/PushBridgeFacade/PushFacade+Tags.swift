import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore

// Tencent Cloud IM's tags (`all_member_push/im_add_tag` …, Specification §14): a tag is a push label
// made by its first user, named as given; each call one read → decide → commit, and a refused call
// writes nothing.
extension PushFacade {
    /// Why a tag call was refused.
    public struct TagRefusal: Error, Hashable, Sendable, CustomStringConvertible {
        private enum Reason: Hashable, Sendable {
            case unknownUser
            case tooManyTags(Int)
        }
        private let reason: Reason
        /// The user the call named.
        public let user: UserID

        /// The app has no such user.
        public static func unknownUser(_ user: UserID) -> Self { Self(reason: .unknownUser, user: user) }
        /// The user would have more than `maximum` tags.
        public static func tooManyTags(_ user: UserID, maximum: Int) -> Self { Self(reason: .tooManyTags(maximum), user: user) }

        public var isUnknownUser: Bool { reason == .unknownUser }

        public var description: String {
            switch reason {
            case .unknownUser: "the user \(JSONValue.string(user).compactText) does not exist"
            case .tooManyTags(let maximum): "the user \(JSONValue.string(user).compactText) would have more than \(maximum) tags (remove some first)"
            }
        }
    }

    /// The most tags a user has (Tencent: 100).
    public static let maximumUserTags = 100

    /// Each user's tags, in code-point order.
    /// - Parameter users: the users asked about.
    /// - Throws: ``TagRefusal`` for a user the app does not have.
    public func tags(of users: [UserID]) async throws -> [[String]] {
        var keys = StateKeys()
        let known = users.map { keys.addUser($0) }
        let pages = users.map { keys.addPage(.labelsOf(user: $0)) }
        let snapshot = try await store.snapshot(keys)
        for (user, position) in zip(users, known) where snapshot.users[position] == nil { throw TagRefusal.unknownUser(user) }
        return pages.map { snapshot.labelPages[$0].labels.map(\.name) }
    }

    /// Adds tags to users (a tag a user has already is no change); a tag no user had is made.
    /// - Parameters:
    ///   - changes: each user and the tags it gets.
    ///   - maximum: the most tags a user may have.
    ///   - now: when.
    /// - Throws: ``TagRefusal`` for an unknown user or one past `maximum`: nothing is written.
    public func addTags(_ changes: [(user: UserID, tags: [String])], maximum: Int = maximumUserTags, at now: Instant) async throws {
        var keys = StateKeys()
        let known = changes.map { keys.addUser($0.user) }
        let pages = changes.map { keys.addPage(.labelsOf(user: $0.user)) }
        var named: [String] = []
        for change in changes { for tag in change.tags where !named.contains(tag) { named.append(tag) } }
        let tags = named
        let labels = tags.map { keys.addLabel($0) }
        try await update(
            PlannedUpdate(keys: keys) { snapshot in
                var has: [UserID: Set<String>] = [:]
                for (i, change) in changes.enumerated() {
                    guard snapshot.users[known[i]] != nil else { throw TagRefusal.unknownUser(change.user) }
                    has[change.user, default: Set(snapshot.labelPages[pages[i]].labels.map(\.key))].formUnion(change.tags)
                    guard has[change.user]!.count <= maximum else { throw TagRefusal.tooManyTags(change.user, maximum: maximum) }
                }
                var labelChanges: [LabelChange] = []
                for (tag, position) in zip(tags, labels) {
                    if snapshot.labels[position] == nil { labelChanges.append(.create(PushLabel(key: tag, name: tag, description: "", createdAt: now))) }
                    let users = changes.filter { $0.tags.contains(tag) }.map(\.user)
                    labelChanges.append(.addUsers(label: tag, users: users, at: now))
                }
                return (StateChanges(labels: labelChanges), ())
            })
    }

    /// Takes tags from users (a tag a user does not have is no change); with `tags` `nil`, every tag
    /// each user has.
    /// - Parameter users: the users, each with the tags taken, or `nil` for all of its tags.
    /// - Throws: ``TagRefusal`` for an unknown user: nothing is written.
    public func removeTags(_ users: [(user: UserID, tags: [String]?)]) async throws {
        var keys = StateKeys()
        let known = users.map { keys.addUser($0.user) }
        let pages = users.map { keys.addPage(.labelsOf(user: $0.user)) }
        try await update(
            PlannedUpdate(keys: keys) { snapshot in
                var taken: [(tag: String, users: [UserID])] = []
                for (i, entry) in users.enumerated() {
                    guard snapshot.users[known[i]] != nil else { throw TagRefusal.unknownUser(entry.user) }
                    let has = snapshot.labelPages[pages[i]].labels.map(\.key)
                    for tag in has where entry.tags?.contains(tag) ?? true {
                        if let at = taken.firstIndex(where: { $0.tag == tag }) { taken[at].users.append(entry.user) } else { taken.append((tag, [entry.user])) }
                    }
                }
                return (StateChanges(labels: taken.map { .removeUsers(label: $0.tag, users: $0.users) }), ())
            })
    }
}
