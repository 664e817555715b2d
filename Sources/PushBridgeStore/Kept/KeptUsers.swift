import PushBridgeCore

/// Users read for one-to-one messages (as receivers and as senders), kept on a connection between
/// transactions by name, so that a warm one-to-one send reads no user rows.
///
/// Each is the user's whole stored state (devices, every conversation's settings, name cards), so
/// one entry answers for any conversation. Kept true under the rule of ``ReceiverTable``: a saved or
/// removed user is forgotten (so are the previous owners of a device token that moved), a counted
/// badge is set in place, and everything is dropped when another connection commits
/// (`PRAGMA data_version`) or a transaction rolls back.
package final class KeptUsers {
    /// One user's stored state and its row.
    package struct User {
        package var key: UserKey
        package var record: UserRecord
    }

    private var byName: [UserID: User] = [:]
    private var names: [Int64: UserID] = [:]

    /// How many users are kept.
    package var count: Int { byName.count }

    /// The kept user with this name, if any.
    package subscript(name: UserID) -> User? { byName[name] }

    /// Keeps a user; past `limit` users, the others are forgotten first (0 keeps none).
    package func keep(_ user: User, limit: Int) {
        guard limit > 0 else { return }
        if byName.count >= limit { removeAll() }
        byName[user.record.state.user] = user
        names[user.key.rawValue] = user.record.state.user
    }

    /// Forgets the user of a row (after a change to it).
    package func forget(_ key: Int64) {
        if let name = names.removeValue(forKey: key) { byName[name] = nil }
    }

    /// Sets the badge counter of a row's user, when kept.
    package func setBadge(_ badge: Int, of key: Int64) {
        if let name = names[key] { byName[name]?.record.state.badge = badge }
    }

    /// Sets the counters of the kept users among `badges` (the last one given for a user wins).
    /// A group send counts many users and few of them are kept: their keys are compared while few,
    /// rather than every counted user looked up.
    package func setBadges(_ badges: [(key: UserKey, badge: Int)]) {
        guard !names.isEmpty else { return }
        guard names.count <= 8 else {
            for (key, badge) in badges { setBadge(badge, of: key.rawValue) }
            return
        }
        let kept = Array(names.keys)
        var latest: [Int64: Int] = [:]
        badges.withUnsafeBufferPointer { badges in
            for i in badges.indices where kept.contains(badges[i].key.rawValue) { latest[badges[i].key.rawValue] = badges[i].badge }
        }
        for (key, badge) in latest { setBadge(badge, of: key) }
    }

    package func removeAll() {
        byName.removeAll()
        names.removeAll()
    }
}

extension KeptUsers.User {
    /// The user as a receiver of a message in `conversation`: the state a receiver query reads
    /// (only that conversation's settings; no name cards, bound certificate or display name).
    package func receiver(in conversation: ConversationKey) -> StoredReceiver {
        var state = record.state
        let settings = state.conversations[conversation]
        state.conversations = [:]
        if let settings, !settings.isEmpty { state.conversations[conversation] = settings }
        state.nameCards = [:]
        state.boundCertificate = nil
        state.displayName = nil
        return StoredReceiver(key: key, state: state, isConfigured: record.isConfigured)
    }

    /// The user as the sender of a message (in `group`, when it is a group's): the display name and
    /// that group's name card, as `UserTable/sender(_:group:)` reads them.
    package func sender(group: String?) -> UserState {
        var state = UserState(user: record.state.user, displayStyle: .simpleBanner, backgroundGraceSeconds: 0)
        state.displayName = record.state.displayName
        if let group, let card = record.state.nameCards[group] { state.nameCards[group] = card }
        return state
    }
}
