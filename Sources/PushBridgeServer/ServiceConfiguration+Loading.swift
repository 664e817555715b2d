import Foundation
import Logging
import PushBridgeDialects
import PushBridgeStore
import Yams

/// A configuration value that cannot be used: names its source (file, variable or flag), the key,
/// what was expected and (unless the key is a secret) what was found.
public struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `pushbridge.yaml`, `environment PUSHBRIDGE_PORT` or `--listen`.
    public var source: String
    /// The configuration key.
    public var key: String
    public var expected: String
    public var found: String?

    public var description: String {
        var text = "\(source): \(key): expected \(expected)"
        if let found { text += ", found \(found)" }
        return text
    }
}

extension ServiceConfiguration {
    /// One configuration key: its name in the YAML file, its environment variable and whether it is a secret.
    public struct Key: Sendable, Hashable {
        public var name: String
        public var isSecret: Bool
        /// `PUSHBRIDGE_` + the name upper-cased with `-` → `_`.
        public var environmentVariable: String { "PUSHBRIDGE_" + name.uppercased().replacingOccurrences(of: "-", with: "_") }
    }

    /// Every key the service reads.
    public static let keys: [Key] = [
        "listen", "db", "synchronous", "body-limit-bytes", "request-timeout-seconds", "group-commit-max-batch",
        "group-commit-wait-microseconds", "max-open-apps", "store-connections", "postgres-connections", "repeat-window-seconds", "push-task-limit", "push-task-page-size", "push-task-rate", "log-level", "admin-key-sha256",
        "apns-credentials-file", "apns-url", "apns-ca-file", "apns-request-timeout-seconds", "delivery-max-age-seconds",
        "delivery-retry-base-milliseconds", "delivery-concurrency", "apns-connections", "apns-thread-nice", "delivery-retention-seconds", "delivery-lease-seconds", "feedback-url",
    ].map { Key(name: $0, isSecret: false) } + [Key(name: "admin-key", isSecret: true), Key(name: "store", isSecret: true)]

    /// Reads the configuration: defaults, then the YAML file, then `PUSHBRIDGE_…` variables, then flags.
    /// - Parameters:
    ///   - file: a YAML file of `key: value` lines (see `Examples/service/pushbridge.yaml`), or `nil`.
    ///   - environment: the process environment; only `PUSHBRIDGE_…` variables are read, and an
    ///     unknown one is an error (a misspelt setting is never silently ignored).
    ///   - overrides: values from command-line flags, by key name, with the flag that gave them.
    ///   - backends: the storage backends this build offers, which `store` may name by URL scheme.
    /// - Throws: ``ConfigurationError`` for an unreadable file, an unknown key or a bad value.
    public static func load(
        file: String?, environment: [String: String], overrides: [(key: String, value: String, flag: String)] = [], backends: [any StorageBackend] = []
    ) throws -> ServiceConfiguration {
        var values: [String: (value: String, source: String)] = [:]
        if let file {
            for (key, value) in try readFile(file) { values[key] = (value, file) }
        }
        let byVariable = Dictionary(uniqueKeysWithValues: keys.map { ($0.environmentVariable, $0.name) })
        for (variable, value) in environment.sorted(by: { $0.key < $1.key }) where variable.hasPrefix("PUSHBRIDGE_") {
            guard let key = byVariable[variable] else {
                let asKey = variable.dropFirst("PUSHBRIDGE_".count).lowercased().replacingOccurrences(of: "_", with: "-")
                let hint = DialectRegistry.suggestion(for: asKey, among: keys.map(\.name)).map {
                    " (did you mean \(Key(name: $0, isSecret: false).environmentVariable)?)"
                } ?? ""
                throw ConfigurationError(source: "environment", key: variable, expected: "a known PUSHBRIDGE_ variable\(hint)", found: nil)
            }
            values[key] = (value, "environment \(variable)")
        }
        for override in overrides { values[override.key] = (override.value, override.flag) }
        return try resolve(values, backends: backends)
    }

    /// Reads a YAML mapping of scalars.
    static func readFile(_ path: String) throws -> [(String, String)] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(source: path, key: "(file)", expected: "a readable YAML file", found: "no such file")
        }
        let text = String(decoding: data, as: UTF8.self)
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            throw ConfigurationError(source: path, key: "(file)", expected: "YAML", found: "\(error)".split(separator: "\n").first.map(String.init))
        }
        guard let node else { return [] }
        guard let mapping = node.mapping else {
            throw ConfigurationError(source: path, key: "(file)", expected: "a mapping of `key: value` lines", found: "a \(node.kindName)")
        }
        let known = Set(keys.map(\.name))
        var out: [(String, String)] = []
        for (keyNode, valueNode) in mapping {
            guard let key = keyNode.scalar?.string else {
                throw ConfigurationError(source: path, key: "(file)", expected: "string keys", found: "a \(keyNode.kindName) key")
            }
            guard known.contains(key) else {
                let hint = DialectRegistry.suggestion(for: key, among: keys.map(\.name)).map { " (did you mean \($0)?)" } ?? ""
                throw ConfigurationError(source: path, key: key, expected: "a known key\(hint)", found: nil)
            }
            guard let scalar = valueNode.scalar else {
                throw ConfigurationError(source: path, key: key, expected: "a single value", found: "a \(valueNode.kindName)")
            }
            out.append((key, scalar.string))
        }
        return out
    }

    static func resolve(_ values: [String: (value: String, source: String)], backends: [any StorageBackend]) throws -> ServiceConfiguration {
        var c = ServiceConfiguration()
        func fail(_ key: String, _ expected: String, secret: Bool = false) -> ConfigurationError {
            let entry = values[key]!
            return ConfigurationError(source: entry.source, key: key, expected: expected, found: secret ? "(hidden)" : "\"\(entry.value)\"")
        }
        func integer(_ key: String, _ range: ClosedRange<Int>, _ expected: String) throws -> Int? {
            guard let text = values[key]?.value else { return nil }
            guard let n = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(n) else { throw fail(key, expected) }
            return n
        }
        if let listen = values["listen"]?.value {
            guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65_535).contains(port),
                !listen[..<colon].isEmpty
            else { throw fail("listen", "HOST:PORT such as 127.0.0.1:8080") }
            c.host = String(listen[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            c.port = port
        }
        if let db = values["db"]?.value {
            guard !db.isEmpty else { throw fail("db", "a data directory, or :memory:") }
            c.database = db
        }
        if let store = values["store"]?.value, store != "sqlite" {
            do {
                c.store = try StoreURL(store, backends: backends)
            } catch let error as StorageURLError {
                throw fail("store", error.expected, secret: true)
            }
        }
        if let text = values["synchronous"]?.value {
            guard let mode = SQLiteStateStore.Options.Synchronous(rawValue: text.uppercased()) else { throw fail("synchronous", "normal or full") }
            c.synchronous = mode
        }
        if let n = try integer("body-limit-bytes", 1_024...(256 << 20), "a size in bytes, 1024–268435456") { c.bodyLimitBytes = n }
        if let text = values["request-timeout-seconds"]?.value {
            guard let seconds = Double(text), seconds > 0, seconds <= 3_600 else { throw fail("request-timeout-seconds", "seconds, more than 0 and at most 3600") }
            c.requestTimeoutSeconds = seconds
        }
        if let n = try integer("group-commit-max-batch", 1...10_000, "a number of writes, 1–10000") { c.groupCommitMaxBatch = n }
        if let n = try integer("group-commit-wait-microseconds", 0...100_000, "microseconds, 0–100000") { c.groupCommitWaitMicroseconds = n }
        if let n = try integer("max-open-apps", 1...1_000_000, "a number of apps, 1–1000000") { c.maxOpenApps = n }
        if values["store-connections"] != nil && values["postgres-connections"] != nil {
            throw ConfigurationError(source: values["store-connections"]!.source, key: "store-connections", expected: "either store-connections or postgres-connections (its older name), not both")
        }
        if let n = try integer("store-connections", 1...1_000, "a number of connections, 1–1000") { c.storeConnections = n }
        if let n = try integer("postgres-connections", 1...1_000, "a number of connections, 1–1000") { c.storeConnections = n }
        if let n = try integer("repeat-window-seconds", 86_400...(3_650 * 86_400), "seconds, at least 86400 (24 hours)") {
            c.repeatWindowSeconds = Int64(n)
        }
        if let n = try integer("push-task-limit", 1...1_000, "a number of push tasks, 1–1000") { c.pushTaskLimit = n }
        if let n = try integer("push-task-page-size", 1...1_000, "a number of receivers, 1–1000") { c.pushTaskPageSize = n }
        if let n = try integer("push-task-rate", 0...1_000_000, "receivers a second, 1–1000000, or 0 for no limit") { c.pushTaskRate = n == 0 ? nil : n }
        if let text = values["log-level"]?.value {
            guard let level = Logger.Level(rawValue: text.lowercased()) else {
                throw fail("log-level", "one of " + Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))
            }
            c.logLevel = level
        }
        if values["admin-key"] != nil && values["admin-key-sha256"] != nil {
            throw ConfigurationError(source: values["admin-key"]!.source, key: "admin-key", expected: "either admin-key or admin-key-sha256, not both")
        }
        if let key = values["admin-key"]?.value {
            guard key.utf8.count >= 16 else { throw fail("admin-key", "a key of at least 16 characters", secret: true) }
            c.adminKeyHash = AccessKey.hash(key)
        }
        if let hex = values["admin-key-sha256"]?.value {
            guard let hash = AccessKey.bytes(hex: hex), hash.count == 32 else { throw fail("admin-key-sha256", "64 hex digits (sha256sum of the key)") }
            c.adminKeyHash = hash
        }
        try resolveDelivery(values, into: &c, fail: fail, integer: integer)
        return c
    }

    static func resolveDelivery(
        _ values: [String: (value: String, source: String)], into c: inout ServiceConfiguration,
        fail: (String, String, Bool) -> ConfigurationError, integer: (String, ClosedRange<Int>, String) throws -> Int?
    ) throws {
        let deliveryKeys = keys.map(\.name).filter { $0.hasPrefix("apns-") || $0.hasPrefix("delivery-") || $0 == "feedback-url" }
        guard let file = values["apns-credentials-file"]?.value else {
            if let stray = deliveryKeys.first(where: { values[$0] != nil }) {
                throw ConfigurationError(source: values[stray]!.source, key: stray, expected: "apns-credentials-file as well (delivery is off without credentials)")
            }
            return
        }
        guard !file.isEmpty else { throw fail("apns-credentials-file", "the path of a YAML credentials file", false) }
        var d = Delivery(credentialsFile: file)
        for key in ["apns-url", "feedback-url"] {
            guard let url = values[key]?.value else { continue }
            guard let parsed = URL(string: url), ["https", "http"].contains(parsed.scheme ?? ""), parsed.host != nil, parsed.query == nil else {
                throw fail(key, key == "apns-url" ? "an https URL such as https://127.0.0.1:8443" : "an http(s) URL", false)
            }
            if key == "apns-url" { d.apnsURL = url.hasSuffix("/") ? String(url.dropLast()) : url } else { d.feedbackURL = url }
        }
        if let ca = values["apns-ca-file"]?.value {
            guard !ca.isEmpty else { throw fail("apns-ca-file", "the path of a PEM file", false) }
            d.caFile = ca
        }
        if let text = values["apns-request-timeout-seconds"]?.value {
            guard let seconds = Double(text), seconds > 0, seconds <= 300 else { throw fail("apns-request-timeout-seconds", "seconds, more than 0 and at most 300", false) }
            d.requestTimeoutSeconds = seconds
        }
        if let n = try integer("delivery-max-age-seconds", 1...(30 * 86_400), "seconds, 1–2592000") { d.maximumAgeSeconds = Int64(n) }
        if let n = try integer("delivery-retry-base-milliseconds", 1...60_000, "milliseconds, 1–60000") { d.retryBaseMilliseconds = Int64(n) }
        if let n = try integer("delivery-concurrency", 1...10_000, "requests in flight, 1–10000") { d.concurrency = n }
        if let n = try integer("apns-connections", 1...64, "HTTP/2 connections per credential, 1–64") { d.connections = n }
        if let n = try integer("apns-thread-nice", 0...19, "a nice value for the APNs client's threads, 0–19") { d.apnsThreadNice = Int32(n) }
        if let n = try integer("delivery-retention-seconds", 60...(365 * 86_400), "seconds, 60–31536000") { d.retentionSeconds = Int64(n) }
        if let n = try integer("delivery-lease-seconds", 1...3_600, "seconds, 1–3600") { d.leaseSeconds = Int64(n) }
        c.delivery = d
    }

    /// The configuration as a YAML mapping of the keys that were read; the admin key appears only
    /// as whether it is set.
    public var summary: String {
        """
        listen: \(host):\(port)
        store: \(store.map(\.description) ?? "sqlite")
        db: \(database)\(store.map { " (unused with \($0.scheme))" } ?? "")
        store-connections: \(storeConnections)\(store == nil ? " (unused with SQLite)" : " (this node's, for every app)")
        synchronous: \(synchronous.rawValue.lowercased())
        body-limit-bytes: \(bodyLimitBytes)
        request-timeout-seconds: \(requestTimeoutSeconds)
        group-commit-max-batch: \(groupCommitMaxBatch)
        group-commit-wait-microseconds: \(groupCommitWaitMicroseconds)
        max-open-apps: \(maxOpenApps)\(isInMemory ? " (unused in memory: every app stays open)" : "")
        repeat-window-seconds: \(repeatWindowSeconds)
        push-task-limit: \(pushTaskLimit) (pending, or made in 5 minutes)
        push-task-page-size: \(pushTaskPageSize)
        push-task-rate: \(pushTaskRate.map { "\($0) receivers a second" } ?? "0 (no limit)")
        log-level: \(logLevel.rawValue)
        admin key: \(adminKeyHash == nil ? "not set (no app can be created)" : "set (hidden)")
        """ + deliverySummary
    }

    var deliverySummary: String {
        guard let d = delivery else { return "\ndelivery: off (no apns-credentials-file)" }
        return """

            apns-credentials-file: \(d.credentialsFile)
            apns-url: \(d.apnsURL ?? "by environment (api.push.apple.com, api.development.push.apple.com)")
            apns-ca-file: \(d.caFile ?? "system trust")
            apns-request-timeout-seconds: \(d.requestTimeoutSeconds)
            delivery-max-age-seconds: \(d.maximumAgeSeconds)
            delivery-retry-base-milliseconds: \(d.retryBaseMilliseconds)
            delivery-concurrency: \(d.concurrency)
            apns-connections: \(d.connections)
            apns-thread-nice: \(d.apnsThreadNice)
            delivery-retention-seconds: \(d.retentionSeconds)
            delivery-lease-seconds: \(d.leaseSeconds)
            feedback-url: \(d.feedbackURL ?? "none")
            """
    }
}

extension Node {
    var kindName: String {
        switch self {
        case .scalar: return "scalar"
        case .mapping: return "mapping"
        case .sequence: return "sequence"
        case .alias: return "alias"
        }
    }
}
