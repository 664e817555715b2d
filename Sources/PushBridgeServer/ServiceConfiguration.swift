import Logging
import PushBridgeDelivery
import PushBridgeFacade
import PushBridgeStore

/// Everything `pushbridge serve` is started with (Specification §11). Read by
/// ``load(file:environment:overrides:backends:)`` from a YAML file, `PUSHBRIDGE_…` environment variables
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
    /// How many apps' stores stay open at once: past it, the least recently used idle ones are
    /// closed (their writer finished, their files or connections released) and open again on their
    /// next request. An app whose outbox holds deliveries stays open until they are made; state
    /// in memory (`:memory:`) is never closed.
    public var maxOpenApps: Int = 256
    /// How long sent message ids are remembered (at least 24 hours).
    public var repeatWindowSeconds: Int64
    /// The most push tasks (campaigns) an app has pending, or made within 5 minutes (the vendors' 3).
    public var pushTaskLimit: Int = 3
    /// Receivers a push task reads and decides together: a larger page costs fewer reads and updates
    /// (750: a million receivers decided in under a minute here). SQLite writes a page in parts a
    /// request's write can come between (`PushFacade.pagePartReceivers`); PostgreSQL in one update,
    /// where 250 halves a chat message's p99 during a campaign and decides 13 % slower.
    public var pushTaskPageSize = 750
    /// The most receivers a second an app's push tasks decide (`nil`: as fast as its writer takes
    /// them): a broadcast is spread over time, in pages of at most a fiftieth of the rate, instead of
    /// taking the writer, APNs and the app's users' servers all at once.
    public var pushTaskRate: Int?
    /// The log level of the service's log lines (stderr).
    public var logLevel: Logger.Level
    /// Delivery to APNs (Specification §13); `nil`: decisions only, nothing is queued.
    public var delivery: Delivery?
    /// The storage a backend keeps the state in, shared by several nodes (`store: postgres://…`);
    /// `nil`: SQLite files in ``database`` (or memory).
    public var store: StoreURL?
    /// The most connections this node opens to the store's server, for every app and the directory
    /// together (`store-connections`, or its older name `postgres-connections`); a use waits for a
    /// free one at most the statement deadline.
    public var storeConnections: Int = 16

    /// Delivery settings: the credentials file and how deliveries are paced and retried.
    public struct Delivery: Sendable, Equatable {
        /// The YAML file listing the APNs credentials by topic (secrets stay in the files it names).
        public var credentialsFile: String
        /// One base URL for both environments instead of Apple's (a local APNs, the mock).
        public var apnsURL: String?
        /// A PEM file of the CAs to trust instead of the system's.
        public var caFile: String?
        /// One request's deadline.
        public var requestTimeoutSeconds: Double = 10
        /// Retries stop once a delivery has waited this long.
        public var maximumAgeSeconds: Int64 = 86_400
        /// The first retry's delay (doubled per attempt, up to 5 minutes).
        public var retryBaseMilliseconds: Int64 = 1_000
        /// Requests in flight per app: what is in flight costs its payload and headers (at most about
        /// 6 KB each), so 2,000 hold at most about 12 MB while the app delivers; 100 ms away, 2,000
        /// allow 20,000 deliveries/s (500 streams on each of 4 connections).
        public var concurrency: Int = 2_000
        /// HTTP/2 connections per TLS identity (APNs allows up to 1,000 streams on each).
        public var connections: Int = APNsClient.Endpoint.defaultConnections
        /// The nice value of the APNs client's threads (Linux; 0–19, 0: the process's own): above the
        /// process's, requests and decisions get the CPU first and deliveries take what is left, so a
        /// campaign's deliveries slow neither its deciding nor a chat request's answer.
        public var apnsThreadNice: Int32 = 10
        /// How long delivered and failed deliveries stay readable.
        public var retentionSeconds: Int64 = 86_400
        /// How long a worker's claim on a delivery lasts: a node that dies gives its claimed
        /// deliveries up to the other nodes after this long (PostgreSQL).
        public var leaseSeconds: Int64 = 60
        /// Where removed devices and final failures are `POST`ed, if anywhere.
        public var feedbackURL: String?

        public init(credentialsFile: String) { self.credentialsFile = credentialsFile }
    }

    /// The defaults: loopback port 8080, a `pushbridge-data` directory, no admin key.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, database: String = "pushbridge-data", adminKeyHash: [UInt8]? = nil,
        synchronous: SQLiteStateStore.Options.Synchronous = .normal, bodyLimitBytes: Int = 1 << 20, requestTimeoutSeconds: Double = 10,
        groupCommitMaxBatch: Int = 256, groupCommitWaitMicroseconds: Int = 0,
        repeatWindowSeconds: Int64 = PushFacade.minimumRepeatWindowSeconds, logLevel: Logger.Level = .info, delivery: Delivery? = nil
    ) {
        self.delivery = delivery
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
