import PushBridgeCore
import PushBridgeStore

// Push labels (Easemob / Agora Chat `/push/label`, Specification §14): named sets of the app's users,
// each call one read → decide → commit; a refused call writes nothing.
extension PushFacade {
    /// Why a label call was refused.
    public struct LabelRefusal: Error, Hashable, Sendable, CustomStringConvertible {
        private enum Reason: Hashable, Sendable {
            case unknownLabel
            case labelExists
            case tooManyLabels(Int)
        }
        private let reason: Reason
        /// The label's name as the call gave it.
        public let label: String

        /// No label has this name.
        public static func unknownLabel(_ label: String) -> Self { Self(reason: .unknownLabel, label: label) }
        /// A label of this name exists already.
        public static func labelExists(_ label: String) -> Self { Self(reason: .labelExists, label: label) }
        /// The app has its most labels already.
        public static func tooManyLabels(_ label: String, maximum: Int) -> Self { Self(reason: .tooManyLabels(maximum), label: label) }

        public var isUnknownLabel: Bool { reason == .unknownLabel }
        public var isLabelExists: Bool { reason == .labelExists }
        public var isTooManyLabels: Bool { if case .tooManyLabels = reason { true } else { false } }

        public var description: String {
            switch reason {
            case .unknownLabel: "push label not exists of \(label)"
            case .labelExists: "push label already exists: \(label)"
            case .tooManyLabels(let maximum): "the app has \(maximum) push labels, the most it may have"
            }
        }
    }

    /// What adding or removing a label's users did: the users it changed (or found as asked), and
    /// the users it refused with why.
    public struct LabelUsersOutcome: Hashable, Sendable {
        /// Why a user was refused.
        public enum Failure: Hashable, Sendable {
            /// The app has no such user.
            case unknownUser
            /// The label has its most users already.
            case labelFull(maximum: Int)
        }
        /// A user refused, and why.
        public struct Refused: Hashable, Sendable {
            public var user: UserID
            public var failure: Failure
            public init(user: UserID, failure: Failure) {
                self.user = user
                self.failure = failure
            }
        }
        public var succeeded: [UserID] = []
        public var failed: [Refused] = []
    }

    /// The most labels an app has (Easemob and Agora Chat: 100).
    public static let maximumLabels = 100
    /// The most users a label has (20,000).
    public static let maximumLabelUsers = 20_000

    /// Creates a label.
    /// - Parameters:
    ///   - label: the label (its count is ignored).
    ///   - maximum: the most labels the app may have.
    /// - Returns: the label as stored.
    /// - Throws: ``LabelRefusal`` when the key is taken or the app has `maximum` labels.
    public func createLabel(_ label: PushLabel, maximum: Int = maximumLabels) async throws -> PushLabel {
        var keys = StateKeys()
        let existing = keys.addLabel(label.key)
        let all = keys.addPage(.labels(after: nil, limit: maximum))
        return try await update(
            PlannedUpdate(keys: keys) { snapshot in
                guard snapshot.labels[existing] == nil else { throw LabelRefusal.labelExists(label.name) }
                guard snapshot.labelPages[all].labels.count < maximum else { throw LabelRefusal.tooManyLabels(label.name, maximum: maximum) }
                var stored = label
                stored.count = 0
                return (StateChanges(labels: [.create(stored)]), stored)
            })
    }

    /// Forgets a label and its users.
    /// - Parameters:
    ///   - key: the label's key.
    ///   - name: its name as the call gave it (for the refusal).
    /// - Throws: ``LabelRefusal`` for an unknown label.
    public func deleteLabel(_ key: String, named name: String) async throws {
        var keys = StateKeys()
        let position = keys.addLabel(key)
        try await update(
            PlannedUpdate(keys: keys) { snapshot in
                guard snapshot.labels[position] != nil else { throw LabelRefusal.unknownLabel(name) }
                return (StateChanges(labels: [.delete(key: key)]), ())
            })
    }

    /// Adds users to a label: users the app knows, while the label has room (a user already in it
    /// succeeds and keeps its time).
    /// - Parameters:
    ///   - users: the users, in the order the call names them (each once).
    ///   - key: the label's key.
    ///   - name: its name as the call gave it (for the refusal).
    ///   - at: when they are added.
    ///   - maximum: the most users a label has.
    /// - Throws: ``LabelRefusal`` for an unknown label.
    public func addUsers(_ users: [UserID], toLabel key: String, named name: String, at: Instant, maximum: Int = maximumLabelUsers) async throws -> LabelUsersOutcome {
        let users = Self.once(users)
        var keys = StateKeys()
        let position = keys.addLabel(key)
        let known = users.map { keys.add(.user($0)) }
        let members = users.map { keys.addPage(.user(label: key, user: $0)) }
        return try await update(
            PlannedUpdate(keys: keys) { snapshot in
                guard let label = snapshot.labels[position] else { throw LabelRefusal.unknownLabel(name) }
                var outcome = LabelUsersOutcome()
                var count = label.count
                var added: [UserID] = []
                for (i, user) in users.enumerated() {
                    if !snapshot.knownTargets[known[i]] {
                        outcome.failed.append(.init(user: user, failure: .unknownUser))
                    } else if !snapshot.labelPages[members[i]].users.isEmpty {
                        outcome.succeeded.append(user)
                    } else if count >= maximum {
                        outcome.failed.append(.init(user: user, failure: .labelFull(maximum: maximum)))
                    } else {
                        count += 1
                        added.append(user)
                        outcome.succeeded.append(user)
                    }
                }
                return (StateChanges(labels: added.isEmpty ? [] : [.addUsers(label: key, users: added, at: at)]), outcome)
            })
    }

    /// Takes users out of a label (a known user not in it succeeds: nothing to take out).
    /// - Parameters:
    ///   - users: the users, in the order the call names them.
    ///   - key: the label's key.
    ///   - name: its name as the call gave it (for the refusal).
    /// - Throws: ``LabelRefusal`` for an unknown label.
    public func removeUsers(_ users: [UserID], fromLabel key: String, named name: String) async throws -> LabelUsersOutcome {
        let users = Self.once(users)
        var keys = StateKeys()
        let position = keys.addLabel(key)
        let members = users.map { keys.addPage(.user(label: key, user: $0)) }
        let known = users.map { keys.add(.user($0)) }
        return try await update(
            PlannedUpdate(keys: keys) { snapshot in
                guard snapshot.labels[position] != nil else { throw LabelRefusal.unknownLabel(name) }
                var outcome = LabelUsersOutcome()
                var removed: [UserID] = []
                for (i, user) in users.enumerated() {
                    if !snapshot.labelPages[members[i]].users.isEmpty {
                        removed.append(user)
                        outcome.succeeded.append(user)
                    } else if snapshot.knownTargets[known[i]] {
                        outcome.succeeded.append(user)
                    } else {
                        outcome.failed.append(.init(user: user, failure: .unknownUser))
                    }
                }
                return (StateChanges(labels: removed.isEmpty ? [] : [.removeUsers(label: key, users: removed)]), outcome)
            })
    }

    /// A label, with its count of users, or `nil`.
    public func label(_ key: String) async throws -> PushLabel? {
        var keys = StateKeys()
        let position = keys.addLabel(key)
        return try await store.snapshot(keys).labels[position]
    }

    /// Labels in key order after `after` (from the first, for `nil`), at most `limit`.
    public func labels(after: String?, limit: Int) async throws -> [PushLabel] {
        var keys = StateKeys()
        let position = keys.addPage(.labels(after: after, limit: limit))
        return try await store.snapshot(keys).labelPages[position].labels
    }

    /// A label's users in name order after `after`, at most `limit`.
    /// - Throws: ``LabelRefusal`` for an unknown label.
    public func labelUsers(_ key: String, named name: String, after: UserID?, limit: Int) async throws -> [LabelUser] {
        try await labelRead(key, named: name, .users(label: key, after: after, limit: limit))
    }

    /// One user of a label, or `nil` when it is not the label's.
    /// - Throws: ``LabelRefusal`` for an unknown label.
    public func labelUser(_ key: String, named name: String, user: UserID) async throws -> LabelUser? {
        try await labelRead(key, named: name, .user(label: key, user: user)).first
    }

    private func labelRead(_ key: String, named name: String, _ page: LabelPage) async throws -> [LabelUser] {
        var keys = StateKeys()
        let label = keys.addLabel(key)
        let position = keys.addPage(page)
        let snapshot = try await store.snapshot(keys)
        guard snapshot.labels[label] != nil else { throw LabelRefusal.unknownLabel(name) }
        return snapshot.labelPages[position].users
    }

    /// Each user once, first mention first.
    private static func once(_ users: [UserID]) -> [UserID] {
        var seen = Set<UserID>()
        return users.filter { seen.insert($0).inserted }
    }
}
