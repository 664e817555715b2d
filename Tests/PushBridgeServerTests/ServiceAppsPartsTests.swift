import Foundation
import Logging
import PushBridgeCore
import PushBridgeEasemob
@testable import PushBridgeServer
import PushBridgeTencent
import PushBridgeStore
import Testing

/// The pieces `ServiceApps` is made of, each on its own: the apps and keys a node knows, the vendor
/// bindings, the directory's change queue, vendor message ids and the credentials that verified.
@Suite("Service apps, by concern")
struct ServiceAppsPartsTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
    static let admin = "admin-key-0123456789abcdef"

    func changes(open: Bool = true) -> DirectoryChanges { DirectoryChanges(isOpen: { open }) }

    @Test("Known apps: a key opens its own app only; the admin key and other apps' keys are 403, anything else 401")
    func knownAppsAccess() async throws {
        let directory = MemoryAppDirectory()
        let apps = try KnownApps(directory: directory, isShared: false, adminKeyHash: AccessKey.hash(Self.admin), changes: changes(), logger: logger)
        let a = try #require(try await apps.create("a"))
        let b = try #require(try await apps.create("b"))
        #expect(try await apps.create("a") == nil, "an id is created once")
        let (aExists, cExists) = (try await apps.exists("a"), try await apps.exists("c"))
        #expect(aExists && !cExists)
        #expect(await apps.access(to: "a", key: a) == .granted)
        #expect(await apps.access(to: "a", key: b) == .forbidden)
        #expect(await apps.access(to: "a", key: Self.admin) == .forbidden)
        #expect(await apps.access(to: "a", key: "not-a-key") == .unauthenticated)
        #expect(await apps.access(to: "a", key: nil) == .unauthenticated)
        #expect(await apps.access(to: "a", key: "") == .unauthenticated)
        #expect(apps.isAdmin(Self.admin) && !apps.isAdmin(a) && !apps.isAdmin(nil))
        #expect(try await directory.apps().map(\.id).sorted() == ["a", "b"], "created in the directory, keys only as hashes")
        #expect(try await directory.apps().allSatisfy { $0.keyHash != Array(a.utf8) && $0.keyHash != Array(b.utf8) })
    }

    @Test("Known apps on a shared directory: an app another node created is found on the first miss")
    func knownAppsShared() async throws {
        let directory = MemoryAppDirectory()
        let nodeA = try KnownApps(directory: directory, isShared: true, adminKeyHash: nil, changes: changes(), logger: logger)
        let nodeB = try KnownApps(directory: directory, isShared: true, adminKeyHash: nil, changes: changes(), logger: logger)
        let key = try #require(try await nodeA.create("made-on-a"))
        #expect(try await nodeB.exists("made-on-a"))
        #expect(await nodeB.access(to: "made-on-a", key: key) == .granted)
        // Not shared: a node reads its directory once, at start.
        let alone = try KnownApps(directory: MemoryAppDirectory(), isShared: false, adminKeyHash: nil, changes: changes(), logger: logger)
        #expect(!(try await alone.exists("made-on-a")))
    }

    @Test("A closing service's directory takes no change: creating or binding is refused and nothing is written")
    func closedDirectoryRefusesChanges() async throws {
        let directory = MemoryAppDirectory()
        let apps = try KnownApps(directory: directory, isShared: false, adminKeyHash: nil, changes: changes(open: false), logger: logger)
        await #expect(throws: ServiceError.self) { _ = try await apps.create("late") }
        let bindings = try VendorBindings(directory: directory, isShared: false, changes: changes(open: false), logger: logger)
        await #expect(throws: ServiceError.self) { _ = try await bindings.bind(Self.binding(app: "late", key: "org/app")) }
        #expect(try await directory.apps().isEmpty)
        #expect(try await directory.vendorBindings().isEmpty)
    }

    static func binding(app: String, vendor: VendorBinding.Vendor = .easemob, key: String) -> VendorBinding {
        VendorBinding(app: app, vendor: vendor, key: key, account: "client", secret: [1, 2, 3], boundAt: Instant(milliseconds: 1))
    }

    @Test("Vendor bindings: one key one app, a rebinding replaces the app's earlier key, unbinding forgets it")
    func vendorBindings() async throws {
        let directory = MemoryAppDirectory()
        let bindings = try VendorBindings(directory: directory, isShared: false, changes: changes(), logger: logger)
        #expect(try await bindings.bind(Self.binding(app: "a", key: "org/one")))
        #expect(try await bindings.bind(Self.binding(app: "a", vendor: .tencent, key: "1400000001")))
        #expect(!(try await bindings.bind(Self.binding(app: "b", key: "org/one"))), "another app holds the key")
        #expect(await bindings.binding(.easemob, key: "org/one")?.app == "a")
        #expect(bindings.bindings(of: "a").map(\.vendor) == [.easemob, .tencent])
        #expect(try await bindings.bind(Self.binding(app: "a", key: "org/two")))
        #expect(await bindings.binding(.easemob, key: "org/one") == nil, "the earlier key no longer names the app")
        #expect(await bindings.binding(.easemob, key: "org/two")?.app == "a")
        #expect(try await bindings.unbind(app: "a", vendor: .easemob))
        #expect(!(try await bindings.unbind(app: "a", vendor: .easemob)))
        #expect(bindings.bindings(of: "a").map(\.vendor) == [.tencent])
        #expect(try await directory.vendorBindings().map(\.key) == ["1400000001"], "the directory holds what the cache says")
    }

    @Test("Vendor bindings on a shared directory: a binding another node made is found on the first miss")
    func vendorBindingsShared() async throws {
        let directory = MemoryAppDirectory()
        let nodeA = try VendorBindings(directory: directory, isShared: true, changes: changes(), logger: logger)
        let nodeB = try VendorBindings(directory: directory, isShared: true, changes: changes(), logger: logger)
        #expect(try await nodeA.bind(Self.binding(app: "a", key: "org/one")))
        #expect(await nodeB.binding(.easemob, key: "org/one")?.app == "a")
    }

    @Test("Vendor message ids: digits, the millisecond then a six-digit counter, never the same twice")
    func messageIDs() {
        let ids = VendorMessageIDs()
        let now = Instant(milliseconds: 1_700_000_000_123)
        let made = (0..<2_000).map { _ in ids.next(now) }
        #expect(Set(made).count == made.count)
        #expect(made.allSatisfy { $0.hasPrefix("1700000000123") && $0.count == 19 && $0.allSatisfy(\.isNumber) })
        #expect(made.first == "1700000000123000001")
    }

    @Test("Verified signatures: valid until they expire, for their binding and identifier only; a full cache starts again")
    func verifiedSignatures() {
        let cache = VerifiedSignatures()
        let binding = Self.binding(app: "a", vendor: .tencent, key: "1400000001")
        cache.remember("sig", binding: binding, identifier: "admin", expiresAt: 100)
        #expect(cache.isValid("sig", binding: binding, identifier: "admin", now: 99))
        #expect(!cache.isValid("sig", binding: binding, identifier: "admin", now: 100), "expired")
        #expect(!cache.isValid("sig", binding: binding, identifier: "other", now: 1))
        var rebound = binding
        rebound.boundAt = Instant(milliseconds: 2)
        #expect(!cache.isValid("sig", binding: rebound, identifier: "admin", now: 1), "a new binding (a new secret) no longer matches")
        for i in 0..<VerifiedSignatures.capacity { cache.remember("s\(i)", binding: binding, identifier: "admin", expiresAt: 100) }
        #expect(!cache.isValid("sig", binding: binding, identifier: "admin", now: 1), "emptied when full: bounded")
        let token = Self.binding(app: "a", key: "org/one")
        cache.remember("token", binding: token, expiresAt: Instant(milliseconds: 50))
        #expect(cache.isValid("token", binding: token, now: Instant(milliseconds: 49)) && !cache.isValid("token", binding: token, now: Instant(milliseconds: 50)))
    }
}
