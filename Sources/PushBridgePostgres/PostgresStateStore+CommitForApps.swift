import PostgresNIO
import PushBridgeRecordCoding
import PushBridgeStore

// One call of `pushbridge_commit_apps` commits the sends several apps of a schema decided on what the
// node keeps (migration `2026-12-06-one-commit-for-apps`); one app's commit alone still calls
// `pushbridge_commit_logged`, which costs PostgreSQL less for one app.

extension PostgresStateStore {
    /// The function taking several apps' commits at once (``commitAppsFunction``).
    static let oneCommitForApps = Migration(identifier: "2026-12-06-one-commit-for-apps", sql: commitAppsFunction)

    /// Both commit functions looking rows up by key only (``commitLoggedFunction``,
    /// ``commitAppsFunction``): same arguments, same answers as before it.
    static let commitFunctionsByKey = Migration(identifier: "2026-12-06-commit-functions-look-up-by-key", sql: commitLoggedFunction + "\n" + commitAppsFunction)

    /// The call of `schema`'s `pushbridge_commit_apps` with `commits` (each app at most once, in the
    /// order their locks are taken), its parameters appended to `binds`.
    static func commitCall(schema: String, _ commits: [(app: Int32, commit: KeptDataCommit)], binds: inout PostgresBindings) -> String {
        let first = binds.count + 1
        var readsListed: [Bool] = [], reads = (ends: [Int32](), users: [Int64]())
        var records = (ends: [Int32](), ids: [String](), cutoffs: [Int64]()), rolls = (ends: [Int32](), ids: [Int64](), usedAt: [Int64]())
        var logs = (app: [Int32](), entries: [ByteBuffer](), listed: [Bool](), userEnds: [Int32](), users: [Int64]())
        var deliveries = (app: [Int32](), items: [OutboxDelivery]()), sent = (app: [Int32](), items: [SentMessage]())
        var prunes = (app: [Int32](), before: [Int64]())
        for (place, (_, commit)) in commits.enumerated() {
            let n = Int32(place + 1)
            let effects = commit.effects
            readsListed.append(commit.readUsers != nil)
            reads.users += commit.readUsers?.sorted() ?? []
            reads.ends.append(Int32(reads.users.count))
            for (id, since) in commit.reads.sorted(by: { $0.key < $1.key }) {
                records.ids.append(id)
                records.cutoffs.append(since.milliseconds)
            }
            records.ends.append(Int32(records.ids.count))
            for (id, usedAt) in commit.rolls.sorted(by: { $0.key < $1.key }) {
                rolls.ids.append(id)
                rolls.usedAt.append(usedAt.milliseconds)
            }
            rolls.ends.append(Int32(rolls.ids.count))
            if !effects.badges.isEmpty {
                let users = BadgeLogEntries.users(of: effects.badges)
                logs.app.append(n)
                logs.entries.append(ByteBuffer(bytes: BadgeLogEntries.write(effects.badges)))
                logs.listed.append(users != nil)
                logs.users += users ?? []
                logs.userEnds.append(Int32(logs.users.count))
            }
            deliveries.app += repeatElement(n, count: effects.deliveries.count)
            deliveries.items += effects.deliveries
            sent.app += repeatElement(n, count: effects.records.count)
            sent.items += effects.records
            if let before = commit.pruneBefore {
                prunes.app.append(n)
                prunes.before.append(before.milliseconds)
            }
        }
        binds.append(commits.map(\.app))
        binds.append(commits.map(\.commit.configuration))
        binds.append(commits.map(\.commit.data))
        binds.append(commits.map(\.commit.lastLog))
        binds.append(readsListed)
        binds.append(reads.ends)
        binds.append(reads.users)
        binds.append(records.ends)
        binds.append(records.ids)
        binds.append(records.cutoffs)
        binds.append(rolls.ends)
        binds.append(rolls.ids)
        binds.append(rolls.usedAt)
        binds.append(logs.app)
        binds.append(logs.entries)
        binds.append(logs.listed)
        binds.append(logs.userEnds)
        binds.append(logs.users)
        binds.append(deliveries.app)
        binds.appendOutboxColumns(deliveries.items)
        binds.append(sent.app)
        binds.appendRecordColumns(sent.items)
        binds.append(prunes.app)
        binds.append(prunes.before)
        // The schema is a checked identifier (PostgresLocation.checkSchema): the call needs no search path.
        return "\(schema).pushbridge_commit_apps(\(binds.placeholders(from: first)))"
    }
}
