import Logging
import PushBridgeFacade
import PushBridgeStore

/// Everything `pushbridge serve` is started with (SPEC §11). Read by
/// ``load(file:environment:overrides:)`` from a YAML file, `PUSHBRIDGE_…` environment variables
/// and command-line flags, later sources winning.
public struct ServiceConfiguration: Sendable, Equatable {
    /// Where the service listens.
    public var host: String
    public var port: Int
    /// The data directory (`service.sqlite` with the apps, one `apps/<app>.sqlite` per app), or
    /// `:memory:` for state that ends with the process.
    public var database: String
    /// SHA-256 of the admin key (only `POST /v1/apps` takes it). `nil`: no app can be created.
    public var adminKeyHash: [UInt8]?
    /// SQLite's durability setting for every app store.
    public var synchronous: SQLiteStateStore.Options.Synchronous
    /// The largest request body accepted; a larger one gets 413.
    public var bodyLimitBytes: Int
    /// How long a connection may stay silent, mid-request or idle, before it is closed; also how
    /// long a write may wait for the writer before it is answered 503 (and not applied).
    public var requestTimeoutSeconds: Double
    /// The most writes one group commit takes.
    public var groupCommitMaxBatch: Int
    /// How long the writer waits for more writes before committing a group that is not full (0:
    /// it takes what arrived while the previous commit ran).
    public var groupCommitWaitMicroseconds: Int
    /// How long sent message ids are remembered (at least 24 hours).
    public var repeatWindowSeconds: Int64
    /// The log level of the service's log lines (stderr).
    public var logLevel: Logger.Level

    /// The defaults: loopback port 8080, a `pushbridge-data` directory, no admin key.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, database: String = "pushbridge-data", adminKeyHash: [UInt8]? = nil,
        synchronous: SQLiteStateStore.Options.Synchronous = .normal, bodyLimitBytes: Int = 1 << 20, requestTimeoutSeconds: Double = 10,
        groupCommitMaxBatch: Int = 256, groupCommitWaitMicroseconds: Int = 0,
        repeatWindowSeconds: Int64 = PushFacade.minimumRepeatWindowSeconds, logLevel: Logger.Level = .info
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.adminKeyHash = adminKeyHash
        self.synchronous = synchronous
        self.bodyLimitBytes = bodyLimitBytes
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.groupCommitMaxBatch = groupCommitMaxBatch
        self.groupCommitWaitMicroseconds = groupCommitWaitMicroseconds
        self.repeatWindowSeconds = repeatWindowSeconds
        self.logLevel = logLevel
    }

    /// Whether state lives only in memory.
    public var isInMemory: Bool { database == ":memory:" }
}
