import PushBridgeCore

extension MemoryStateStore.Transaction {
    func label(_ key: String) throws -> PushLabel? {
        guard var label = contents.labels[key] else { return nil }
        label.count = contents.labelUsers[key]?.count ?? 0
        return label
    }

    func page(_ page: LabelPage) throws -> LabelPageRows {
        switch page {
        case .labels(let after, let limit):
            let keys = contents.labels.keys.filter { after == nil || Self.precedes(after!, $0) }.sorted(by: Self.precedes).prefix(max(0, limit))
            return .labels(try keys.compactMap { try label($0) })
        case .users(let label, let after, let limit):
            let users = (contents.labelUsers[label] ?? [:]).filter { after == nil || Self.precedes(after!, $0.key) }
            return .users(users.sorted { Self.precedes($0.key, $1.key) }.prefix(max(0, limit)).map { LabelUser(user: $0.key, addedAt: $0.value) })
        case .user(let label, let user):
            return .users(contents.labelUsers[label]?[user].map { [LabelUser(user: user, addedAt: $0)] } ?? [])
        case .audience(let audience, let after, let limit):
            var users: [UserID: Instant] = [:]
            // Every user is looked at: the memory store is the contract's twin, not a store for a million users.
            for user in contents.users.keys {
                let admitted = audience.admits(isIn: { contents.labelUsers[$0]?[user] != nil }, value: { contents.userAttributes[user]?[$0] })
                if admitted { users[user] = audience.labels.compactMap { contents.labelUsers[$0]?[user] }.min() ?? Instant(milliseconds: 0) }
            }
            let page = users.filter { after == nil || Self.precedes(after!, $0.key) }.sorted { Self.precedes($0.key, $1.key) }.prefix(max(0, limit))
            return .users(page.map { LabelUser(user: $0.key, addedAt: $0.value) })
        case .labelsOf(let user):
            let keys = contents.labelUsers.filter { $0.value[user] != nil }.keys.sorted(by: Self.precedes)
            return .labels(try keys.compactMap { try label($0) })
        case .attributeNames:
            return .attributes(contents.attributeNames.sorted { $0.key < $1.key }.map { (String($0.key), $0.value) })
        case .attributesOf(let user):
            return .attributes((contents.userAttributes[user] ?? [:]).sorted { Self.precedes($0.key, $1.key) }.map { ($0.key, $0.value) })
        }
    }

    func tasks(_ query: TaskQuery) throws -> [PushTask] {
        let byID = contents.tasks.values.sorted { $0.id < $1.id }
        switch query {
        case .task(let id): return contents.tasks[id].map { [$0] } ?? []
        case .pending: return byID.filter { $0.state == .pending }
        case .createdSince(let instant): return byID.filter { $0.createdAt >= instant }
        case .recent(let limit): return Array(byID.reversed().prefix(max(0, limit)))
        }
    }

    func saveTask(_ task: PushTask) throws {
        try checkWritable()
        contents.tasks[task.id] = task
    }

    func apply(_ change: LabelChange) throws {
        try checkWritable()
        switch change {
        case .create(var label):
            label.count = 0
            contents.labels[label.key] = label
        case .delete(let key):
            contents.labels[key] = nil
            contents.labelUsers[key] = nil
        case .addUsers(let label, let users, let at):
            for user in users where contents.labelUsers[label]?[user] == nil { contents.labelUsers[label, default: [:]][user] = at }
        case .removeUsers(let label, let users):
            for user in users { contents.labelUsers[label]?[user] = nil }
            if contents.labelUsers[label]?.isEmpty == true { contents.labelUsers[label] = nil }
        case .nameAttributes(let names):
            for (slot, name) in names { contents.attributeNames[slot] = name }
        case .setAttributes(let user, let values):
            for value in values { contents.userAttributes[user, default: [:]][value.name] = value.value }
        case .removeAttributes(let user, let names):
            for name in names { contents.userAttributes[user]?[name] = nil }
            if contents.userAttributes[user]?.isEmpty == true { contents.userAttributes[user] = nil }
        }
    }

    /// Code-point order, as SQLite's and PostgreSQL's `C` collation order text.
    private static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
}
